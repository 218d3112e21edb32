"""The link-prediction core: datasets, training, scoring, filtering, the ranking engine and the ranks tables.

It imports only the shared modules (``kgeval.io``, ``kgeval.tables``, ...), never a study.
"""
