"""Literal input features of the name- and attribute-using S3 methods (RDGCN, MultiKE): one vector per entity.

Names (:func:`name_vectors`, ``studies.s3.name_vectors``):

- ``kind: char_ngrams`` (the offline default): every entity's valid names (:func:`kgeval.studies.s3.features.valid_names`,
  joined by a space) are one document; a character n-gram TF-IDF (scikit-learn's ``TfidfVectorizer(analyzer=
  "char_wb")``) is fitted on the documents of *both* graphs, so that the two graphs share one vector space, and
  reduced with ``TruncatedSVD(dim, random_state=seed)``. The paper's methods use fastText word vectors instead.
- ``kind: word_vectors``: pretrained word vectors in fastText's ``.vec`` text format (optional header line
  ``count dim``, then ``word v_1 ... v_d``), read from ``path``; a name's vector is the mean of the vectors of its
  words (white-space tokens of the preprocessed name) that the file holds, as RDGCN and MultiKE build literal
  vectors. Words not in the file are left out; a name with none of its words in the file gets a zero vector.

MultiKE's attribute view is built in :mod:`kgeval.studies.s3.multike` (attribute names aligned through the seeds;
comparing the French and English names as character n-grams, as this module did before, lowered MultiKE).

Every row is L2-normalised; an entity without a name keeps a zero row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kgeval.config import schema_defaults
from kgeval.studies.s3.features import valid_names

__all__ = [
    "NAME_VECTOR_KINDS",
    "char_ngram_vectors",
    "read_word_vectors",
    "word_vector_names",
    "name_vectors",
]

#: the ``studies.s3.name_vectors.kind`` values
NAME_VECTOR_KINDS: tuple[str, ...] = ("char_ngrams", "word_vectors")


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def char_ngram_vectors(
    documents1: Sequence[str], documents2: Sequence[str], dim: int = 64, seed: int = 0, ngram_range=(2, 3)
) -> tuple[np.ndarray, np.ndarray]:
    """Char n-gram TF-IDF of both graphs' documents in one space, reduced by truncated SVD, rows L2-normalised.

    :param documents1: length n1 (an empty string for an entity without text)
    :param documents2: length n2
    :param dim: the SVD dimension (capped at the number of n-gram features minus one)
    :returns: shapes (n1, d) and (n2, d), float32
    """
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [*documents1, *documents2]
    n1 = len(documents1)
    if not any(docs):
        zeros = np.zeros((len(docs), 1), dtype=np.float32)
        return zeros[:n1], zeros[n1:]
    tfidf = TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(ngram_range), lowercase=True, dtype=np.float32)
    matrix = tfidf.fit_transform(docs)
    width = min(int(dim), matrix.shape[1] - 1, matrix.shape[0] - 1)
    if width >= 1:
        dense = TruncatedSVD(n_components=width, random_state=int(seed)).fit_transform(matrix)
    else:
        dense = matrix.toarray()
    dense = _normalise(np.asarray(dense))
    return dense[:n1], dense[n1:]


def read_word_vectors(path: str | os.PathLike, vocabulary: set[str] | None = None) -> tuple[dict[str, np.ndarray], int]:
    """Read a fastText ``.vec`` text file, keeping only the words of ``vocabulary`` (all when ``None``).

    :returns: ``{word: vector}`` and the dimension
    """
    vectors: dict[str, np.ndarray] = {}
    dim = 0
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle):
            parts = line.rstrip("\n").rstrip().split(" ")
            if number == 0 and len(parts) == 2 and all(p.isdigit() for p in parts):
                dim = int(parts[1])
                continue
            if len(parts) < 2:
                continue
            word = parts[0]
            if dim == 0:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                raise ValueError(f"{path}, line {number + 1}: {len(parts) - 1} values, expected {dim}")
            if vocabulary is None or word in vocabulary:
                vectors[word] = np.asarray(parts[1:], dtype=np.float32)
    if dim == 0:
        raise ValueError(f"{path}: no word vectors found")
    return vectors, dim


def word_vector_names(
    documents1: Sequence[str], documents2: Sequence[str], path: str | os.PathLike
) -> tuple[np.ndarray, np.ndarray]:
    """The mean word vector of every document (module doc), rows L2-normalised; shapes (n1, d), (n2, d)."""
    tokens = [doc.split() for doc in [*documents1, *documents2]]
    vocabulary = {t for doc in tokens for t in doc}
    vectors, dim = read_word_vectors(path, vocabulary)
    out = np.zeros((len(tokens), dim), dtype=np.float32)
    for row, doc in enumerate(tokens):
        found = [vectors[t] for t in doc if t in vectors]
        if found:
            out[row] = np.mean(found, axis=0)
    out = _normalise(out)
    return out[: len(documents1)], out[len(documents1) :]


def _name_documents(names: Sequence[Sequence[str]]) -> list[str]:
    return [" ".join(valid_names(n)) for n in names]


def name_vectors(
    names1: Sequence[Sequence[str]], names2: Sequence[Sequence[str]], spec: Mapping[str, Any] | None, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The entity-name vectors of both graphs (module doc).

    :param spec: ``studies.s3.name_vectors``: ``kind`` (char_ngrams / word_vectors), ``dim``, ``path``
    :returns: shapes (n1, d), (n2, d), float32, rows L2-normalised (zero rows for entities without a name)
    """
    spec = {**schema_defaults("studies.s3.name_vectors"), **(spec or {})}  # a partial spec gets the schema's defaults
    kind = spec["kind"]
    docs1, docs2 = _name_documents(names1), _name_documents(names2)
    if kind == "char_ngrams":
        return char_ngram_vectors(docs1, docs2, dim=int(spec["dim"]), seed=seed)
    if kind == "word_vectors":
        path = spec.get("path")
        if not path:
            raise ValueError("studies.s3.name_vectors.path: word_vectors needs the path of a fastText .vec file")
        return word_vector_names(docs1, docs2, path)
    raise ValueError(f"studies.s3.name_vectors.kind must be one of {list(NAME_VECTOR_KINDS)}, got {kind!r}")
