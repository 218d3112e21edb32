"""S3 (paper 002): entity alignment under industrial conditions.

- :mod:`.data`: pairs with names and attributes; :mod:`.features`: name similarity, attribute counts, splits;
- :mod:`.sampling`: biased seed mappings; :mod:`.models`: the EA methods;
- :mod:`.tables`, :mod:`.figures`: Tables 2-3 and the split figure; :mod:`.jobs`: one function per workflow job.
"""
