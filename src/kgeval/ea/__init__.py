"""The entity-alignment (EA) core: datasets, GCN-Align and rank-based evaluation.

Modules
-------
- :mod:`kgeval.ea.pair`: the :class:`~kgeval.ea.pair.EAPair` container;
- :mod:`kgeval.ea.data`: :func:`~kgeval.ea.data.load_ea_pair` (DBP15k, SRPRS, the embedded two-view pair).
- :mod:`kgeval.ea.sylloge_loader`: OpenEA and MED-BBK pairs through ``sylloge``.
- :mod:`kgeval.ea.two_view`: the seeded two-view sampler that builds an EA pair from one bundled PyKEEN graph.
- :mod:`kgeval.ea.gcn_align`: GCN-Align (structure channel) in PyTorch.
- :mod:`kgeval.ea.evaluation`: ranks of the true partners, in the same table format as link prediction.
"""

from kgeval.ea.data import load_ea_pair
from kgeval.ea.pair import EADataError, EAPair

__all__ = ["EAPair", "EADataError", "load_ea_pair"]
