"""Word similarity for alignment: texts as vectors of their content words, each weighted by its rarity,
and the few candidates worth comparing (sparse products made BLOCK_CELLS at a time). Apart from scoring.py
because it reads words as trace.py does, and trace.py reads its thresholds from scoring.py."""
from __future__ import annotations

from itertools import chain

import numpy as np
from scipy import sparse

from pipeline.align.trace import content_words, sorted_words
from pipeline.align.scoring import BLOCK_CELLS, CANDIDATES


def _word_rows(a: list[str], b: list[str]):
    """(k, the row of word_similarity(a, b) for a[k]) for each text of a, made BLOCK_CELLS at a time."""
    vectors_a, vectors_b, _ = word_vectors(a, b)
    vectors_b = vectors_b.T.tocsr()
    step = max(1, BLOCK_CELLS // len(b))
    for start in range(0, len(a), step):
        yield from enumerate((100 * (vectors_a[start:start + step] @ vectors_b).toarray()).astype(np.float32), start)


def _best(scores: np.ndarray, count: int) -> np.ndarray:
    """The positions of the `count` highest scores, ties to the first: the first `count` of a stable
    sort by descending score (in another order), without sorting them all."""
    if len(scores) <= count:
        return np.arange(len(scores))
    least = np.partition(scores, len(scores) - count)[len(scores) - count]
    above = np.flatnonzero(scores > least)
    return np.concatenate([above, np.flatnonzero(scores == least)[:count - len(above)]])


def word_similarity(a: list[str], b: list[str]) -> np.ndarray:
    """0-100 cosine similarity of the texts' content words, each weighted by its rarity in them."""
    vectors_a, vectors_b, _ = word_vectors(a, b)
    return (100 * (vectors_a @ vectors_b.T).toarray()).astype(np.float32)


def word_vectors(a: list[str], b: list[str]) -> tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray]:
    """The texts' content words as unit rows weighted by rarity (a's rows, b's rows), and each word's
    count of texts: `word_similarity` is 100 times their products, whole or a block of rows at a time."""
    rows = [sorted_words(content_words(t)) for t in a + b]
    # Columns numbered by first appearance, each text's words in sorted order: the sums below add
    # in that order, so it must not change.
    vocab = {w: k for k, w in enumerate(dict.fromkeys(chain.from_iterable(rows)))}
    cols = np.fromiter(map(vocab.__getitem__, chain.from_iterable(rows)), dtype=np.int64,
                       count=sum(map(len, rows)))
    df = np.bincount(cols, minlength=len(vocab)).astype(np.float32)
    idf = np.log((len(rows) + 1) / (df + 0.5)).astype(np.float32)
    indptr = np.cumsum([0] + [len(r) for r in rows])
    matrix = sparse.csr_matrix((idf[cols], cols, indptr), shape=(len(rows), max(len(vocab), 1)))
    norms = np.sqrt(matrix.multiply(matrix).sum(axis=1)).A.ravel()
    matrix = sparse.diags(1 / np.where(norms > 0, norms, 1)) @ matrix
    return matrix[:len(a)], matrix[len(a):], df


def _best_by_words(x: sparse.csr_matrix, y: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(rows of x, rows of y): each row of x with the CANDIDATES rows of y most like it (ties to the
    first), none that shares nothing; the products made BLOCK_CELLS at a time."""
    step = max(1, BLOCK_CELLS // max(1, y.shape[0]))
    y_t = y.T.tocsr()
    found_x, found_y = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for start in range(0, x.shape[0], step):
        product = (x[start:start + step] @ y_t).tocoo()
        order = np.lexsort((product.col, -product.data, product.row))
        row, col = product.row[order].astype(np.int64), product.col[order].astype(np.int64)
        keep = np.arange(len(row)) - np.searchsorted(row, row) < CANDIDATES  # its rank in its row
        found_x.append(row[keep] + start)
        found_y.append(col[keep])
    return np.concatenate(found_x), np.concatenate(found_y)


def _pair_words(vectors_a, vectors_b, rows, cols) -> np.ndarray:
    """`word_similarity` of the pairs (rows, cols), ordered by row, only: the same sums in the same order
    (a row's words in turn), a block of rows at a time."""
    out = np.zeros(len(rows), dtype=np.float32)
    step = max(1, BLOCK_CELLS // max(1, vectors_b.shape[0]))
    for start in range(0, vectors_a.shape[0], step):
        lo, hi = np.searchsorted(rows, [start, start + step])
        if lo == hi:
            continue
        wanted = np.unique(cols[lo:hi])
        block = (100 * (vectors_a[start:start + step] @ vectors_b[wanted].T).toarray()).astype(np.float32)
        out[lo:hi] = block[rows[lo:hi] - start, np.searchsorted(wanted, cols[lo:hi])]
    return out
