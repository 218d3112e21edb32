"""Name and attribute vectors: char n-grams in one space, fastText .vec averaging, attribute documents."""

from __future__ import annotations

import numpy as np

from kgeval.studies.s3.name_vectors import char_ngram_vectors, name_vectors, read_word_vectors


def test_char_ngrams_share_one_space():
    left, right = char_ngram_vectors(["paris", "berlin", ""], ["berlin", "paris", "rome"], dim=4, seed=0)
    sims = left @ right.T
    assert sims[0, 1] > 0.99 and sims[1, 0] > 0.99  # identical names
    assert np.all(left[2] == 0)  # no name: zero row
    again = char_ngram_vectors(["paris", "berlin", ""], ["berlin", "paris", "rome"], dim=4, seed=0)
    np.testing.assert_array_equal(left, again[0])


def test_word_vectors_average_the_words(tmp_path):
    path = tmp_path / "words.vec"
    path.write_text("3 2\nnew 1 0\nyork 0 1\nparis 1 1\n", encoding="utf-8")
    vectors, dim = read_word_vectors(path, {"new", "york"})
    assert dim == 2 and set(vectors) == {"new", "york"}
    left, right = name_vectors([("New_York",), ("Unknown",)], [("Paris",)], {"kind": "word_vectors", "path": str(path)})
    np.testing.assert_allclose(left[0], [2**-0.5, 2**-0.5], rtol=1e-6)  # mean of (1, 0) and (0, 1), normalised
    np.testing.assert_array_equal(left[1], [0, 0])  # no known word
    np.testing.assert_allclose(right[0], [2**-0.5, 2**-0.5], rtol=1e-6)
