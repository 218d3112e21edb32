"""Entity alignment (EA): datasets, GCN-Align, rank-based evaluation and the S1 test-size sweep.

Modules
-------
- :mod:`kgeval.ea.data`: the :class:`~kgeval.ea.data.EAPair` container and :func:`~kgeval.ea.data.load_ea_pair`
  (DBP15k, SRPRS, the embedded two-view pair).
- :mod:`kgeval.ea.two_view`: the seeded two-view sampler that builds an EA pair from one bundled PyKEEN graph.
- :mod:`kgeval.ea.gcn_align`: GCN-Align (structure channel) in PyTorch.
- :mod:`kgeval.ea.evaluation`: ranks of the true partners, in the same table format as link prediction.
- :mod:`kgeval.ea.sweep`: the S1 test-size sweep (train/test splits, nested test subsets, figure).
"""

from kgeval.ea.data import EAPair, EADataError, load_ea_pair

__all__ = ["EAPair", "EADataError", "load_ea_pair"]
