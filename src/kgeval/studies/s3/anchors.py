"""The published Hits@1 figures the S3 strength table (:mod:`kgeval.studies.s3.strength`) sets each method against.

Each :class:`Anchor` names the paper and table a figure comes from, the public copy it was read from, the kgeval
pair it measures (an ``ea_datasets`` key) and whether it measures what kgeval's stand-in does on that pair (like for
like: the same pair, seed share, direction and inputs); where it does not, ``differs`` says what differs. A method may
have several anchors; :func:`anchor_for` picks, for one row of the strength table, the like-for-like anchor on the
row's pair where one exists, else another anchor on that pair, else the method's first anchor (then not like for
like: another pair).

- ``gcn_align`` on DBP15k fr-en: 0.389, Zhao et al. (TKDE 2020)'s rerun of GCN-Align's structure-only variant, read
  from the run log of their repository (like for like); 0.373, Wang et al. (EMNLP 2018), the full method, read as
  structure plus attributes (not like for like).
- ``bootea`` on DBP15k fr-en: 0.653, Sun et al. (IJCAI 2018) (like for like).
- ``rsn4ea`` on SRPRS en-fr (``en_fr_15k_V1``): 0.350, Zhao et al.'s rerun of RSNs with RSN's code, read from its
  run log (like for like on that pair; on DBP15k fr-en no figure is).
- ``rdgcn`` on DBP15k fr-en: 0.886, Wu et al. (IJCAI 2019), made with machine-translated names and GloVe vectors (not
  like for like).
- ``multike``: Zhang et al. (IJCAI 2019) report no DBP15k or SRPRS figure.

The figures that could not be read offline are named in the anchors' ``source``: GCN-Align's own structure-only (SE)
row on FR-EN, and RSN's own EN-FR (normal) row in Guo et al. (ICML 2019), where SRPRS was introduced.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Anchor", "ANCHORS", "anchor_for", "NO_ANCHOR"]


@dataclass(frozen=True)
class Anchor:
    """One published Hits@1 figure: the method, the kgeval pair it measures (an ``ea_datasets`` key), the figure
    (``None``: no figure), the paper (authors, venue, year) and table, the public copy it was read from, whether it
    measures what kgeval's stand-in does on that pair, and what differs from kgeval's setting."""

    method: str
    dataset: str
    hits_at_1: float | None
    paper: str
    table: str
    read_from: str
    like_for_like: bool
    differs: str = ""

    def source(self, dataset: str) -> str:
        """The ``source`` column of a strength-table row on ``dataset`` set against this anchor."""
        where = f"{self.paper}, {self.table}; read from {self.read_from}"
        if self.hits_at_1 is None:
            return where
        if dataset != self.dataset:
            return f"{where}; not like for like: a figure on {self.dataset}, the row is on {dataset}" + (
                f"; {self.differs}" if self.differs else "")
        return where if self.like_for_like else f"{where}; not like for like: {self.differs}"


_ZHAO = "Zhao, Zeng, Tang, Wang, Suchanek, 'An Experimental Study of State-of-the-Art Entity Alignment Approaches' " \
    "(IEEE TKDE 2020)"
_EAE = "github.com/DexterZeng/EAE (the study's repository)"

#: every published figure known for the S3 methods (module doc)
ANCHORS: tuple[Anchor, ...] = (
    Anchor("gcn_align", "dbp15k_fr_en", 0.3887, f"{_ZHAO}, its rerun of GCN-Align's structure-only variant (SE)",
           "the run's own Hits@1; the paper's DBP15K results table could not be read offline",
           f"{_EAE} logs/3/fr_en.log, first result ('GCN', Hits@1 38.87 %, 30 % seeds)", True),
    Anchor("gcn_align", "dbp15k_fr_en", 0.373, "Wang, Lv, Lan, Zhang (EMNLP 2018), GCN-Align",
           "its DBP15K results table, FR-EN: the full method's figure, read as its structure-plus-attribute (SE+AE) "
           "row; its structure-only (SE) row could not be read offline",
           "the same row as cited by CAREA (Chen et al., Discrete Dynamics in Nature and Society 2020) Table 2, "
           "preview.hindawi.com/journals/ddns/2020/6831603/tab2", False,
           "structure plus attribute embeddings, where the stand-in is structure only"),
    Anchor("bootea", "dbp15k_fr_en", 0.653, "Sun, Hu, Zhang, Qu (IJCAI 2018), BootEA",
           "its DBP15K results table, FR-EN, 30 % seeds",
           "CAREA (Chen et al. 2020) Table 2, preview.hindawi.com/journals/ddns/2020/6831603/tab2", True),
    Anchor("rsn4ea", "srprs_en_fr", 0.350, f"{_ZHAO}, its rerun of RSNs (Guo, Sun, Hu, ICML 2019) with RSN's code",
           "the run's own Hits@1 on SRPRS EN-FR (en_fr_15k_V1, 30 % seeds, EN->FR); RSN's own EN-FR (normal) row "
           "and the study's SRPRS table could not be read offline",
           f"{_EAE} logs/4/en_fr_15k_V1, last line (Hits@1 0.350)", True,
           "RSN has no published DBP15k figure"),
    Anchor("rdgcn", "dbp15k_fr_en", 0.886, "Wu, Liu, Feng, Wang, Yan, Zhao (IJCAI 2019), RDGCN",
           "its DBP15K results table, FR-EN, 30 % seeds",
           "www.wizwand.com/paper/68fa66391e209131cea0eede (DBP15K FR-EN Hits@1 88.6)", False,
           "entity names machine-translated into English (Google Translate) and embedded with GloVe vectors, where "
           "kgeval's name vectors are character n-grams of the untranslated URI names"),
    Anchor("multike", "", None, "MultiKE (Zhang et al., IJCAI 2019)",
           "reports no DBP15k or SRPRS figure (DBP-WD and DBP-YG only)", "its paper", False),
    Anchor("transe_merge", "", None, "merged-graph TransE", "kgeval's own baseline, no published figure", "-",
           False),
    Anchor("name_similarity", "", None, "training-free name baseline", "no published figure", "-", False),
)

#: the anchor of a method with none listed
NO_ANCHOR = Anchor("", "", None, "no published figure", "none listed", "-", False)


def anchor_for(method: str, dataset: str) -> tuple[Anchor, bool]:
    """The anchor a strength-table row of ``method`` on ``dataset`` is set against, and whether it is like for like
    there (module doc)."""
    own = [a for a in ANCHORS if a.method == method]
    here = [a for a in own if a.dataset == dataset and a.hits_at_1 is not None]
    like = [a for a in here if a.like_for_like]
    if like:
        return like[0], True
    if here:
        return here[0], False
    return (own[0] if own else NO_ANCHOR), False
