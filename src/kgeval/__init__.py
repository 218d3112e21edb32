"""kgeval: rank-based evaluation studies for link prediction and entity alignment."""

__version__ = "0.1.0"
