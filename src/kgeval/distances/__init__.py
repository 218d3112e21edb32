"""Distance matrices shared by the LP and EA scorers.

:mod:`~kgeval.distances.l1` gives ``torch.cdist(p=1)``'s bits faster on the CPU; its compiled kernel lies in
:mod:`~kgeval.distances.l1_kernel`.
"""
