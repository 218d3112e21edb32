"""S1 (paper 000): rank definitions, the adjusted mean rank, and the EA test-size sweep.

- :mod:`.rank_types`: metrics under the four rank types side by side, and the part A settings;
- :mod:`.split_ranks`: ranks of one split under a scorer and a candidate order;
- :mod:`.reference_table`: the reference scorers' metrics next to their theoretical values;
- :mod:`.permutations`: metrics under entity-id permutations;
- :mod:`.rank_type_figures`: the rank-type and permutation figures;
- :mod:`.reference_scorers`: constant, random and permuted scorers;
- :mod:`.splits`: seeded train/test splits of an alignment with nested test subsets;
- :mod:`.alignment_runs`: GCN-Align per (#train, seed) and the ranks of its test pool, file in / file out;
- :mod:`.testsize`: the sweep's metrics per test size, collation and slopes;
- :mod:`.testsize_figures`: Fig. 1 and its adjusted-metric twin.
"""
