"""S2 (paper 001): the unified framework of rank metrics.

- :mod:`.expectations`: expectation/variance curves against the number of candidates;
- :mod:`.adjust`: adjusting published metric values after the fact;
- :mod:`.grid`: the model x dataset x metric grid, size correlations and family figures;
- :mod:`.desiderata`: the desiderata of the paper's Table 1 on synthetic rank sets;
- :mod:`.released`: the authors' released results adjusted with kgeval's expectations, and what the published
  adjustments used;
- :mod:`.claims`: the paper's claims checked on the released results.
"""
