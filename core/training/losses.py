"""Training losses, each written as its paper's equation.

Scores are raw (unnormalised) model outputs.  Every loss is a mean over the
batch's queries (or pairs), so its scale does not grow with the batch size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a loss is computed: importing core never loads it
    import torch

__all__ = ["in_batch_contrastive", "listwise_kl", "listwise_softmax", "pointwise_bce"]


def pointwise_bce(scores: torch.Tensor, grades: torch.Tensor, level: int = 1) -> torch.Tensor:
    """Binary cross-entropy on ``grade >= level`` (pointwise cross-encoder training).

    With :math:`y_i = [g_i \\ge \\text{level}]` and :math:`\\sigma` the logistic function::

        L = -1/N * sum_i [ y_i * log sigma(s_i) + (1 - y_i) * log(1 - sigma(s_i)) ]

    Parameters
    ----------
    scores : tensor of shape (N,)
        The cross-encoder's logits :math:`s_i`.
    grades : tensor of shape (N,)
        The graded labels :math:`g_i`.
    level : int
        The relevance level.
    """
    if scores.shape != grades.shape:
        raise ValueError(f"scores {tuple(scores.shape)} and grades {tuple(grades.shape)} differ in shape")
    from torch.nn import functional as F

    targets = (grades >= level).to(scores.dtype)
    return F.binary_cross_entropy_with_logits(scores, targets)


def listwise_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax cross-entropy of the positive in position 0 of each query's list (T2Ranking, RocketQAv2 eq. 4).

    Each row holds one query's candidates: its positive :math:`p^+` first, then
    hard negatives :math:`p^-`::

        L_sup = -1/B * sum_q log( exp(s(q, p+)) / (exp(s(q, p+)) + sum_{p-} exp(s(q, p-))) )

    Parameters
    ----------
    scores : tensor of shape (B, L)
        Scores of each query's list, the positive in column 0.
    mask : bool tensor of shape (B, L), optional
        ``False`` marks padding (a query with fewer than ``L - 1`` negatives);
        padded entries take no part in the softmax.
    """
    if scores.dim() != 2:
        raise ValueError(f"scores must be (queries, list length), got shape {tuple(scores.shape)}")
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    log_probs = scores.log_softmax(dim=-1)
    return -log_probs[:, 0].mean()


def in_batch_contrastive(
    queries: torch.Tensor,
    positives: torch.Tensor,
    hard_negatives: torch.Tensor | None = None,
    *,
    temperature: float = 1.0,
) -> torch.Tensor:
    """In-batch negatives plus hard negatives (DPR, Karpukhin et al. 2020, eq. 2; RocketQA's cross-batch form).

    Query :math:`q_i`'s candidates are every positive of the batch and every
    hard negative of the batch; its own positive :math:`p_i^+` is the target.
    With :math:`sim(q, p) = q \\cdot p / \\tau`::

        L = -1/B * sum_i log( exp(sim(q_i, p_i+)) /
                              (sum_j exp(sim(q_i, p_j+)) + sum_j sum_h exp(sim(q_i, p_{j,h}-))) )

    Parameters
    ----------
    queries : tensor of shape (B, d)
        Query embeddings.
    positives : tensor of shape (B, d)
        Each query's positive passage embedding.
    hard_negatives : tensor of shape (B, H, d), optional
        Each query's hard negative embeddings (shared with the whole batch).
    temperature : float
        :math:`\\tau`; 1.0 is DPR's plain dot product, smaller values sharpen
        the distribution (useful for normalised embeddings).
    """
    if queries.shape != positives.shape:
        raise ValueError(f"queries {tuple(queries.shape)} and positives {tuple(positives.shape)} differ in shape")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature!r}")
    import torch
    from torch.nn import functional as F

    candidates = positives
    if hard_negatives is not None and hard_negatives.numel():
        candidates = torch.cat([positives, hard_negatives.reshape(-1, positives.shape[-1])], dim=0)
    logits = queries @ candidates.T / temperature
    targets = torch.arange(queries.shape[0], device=queries.device)
    return F.cross_entropy(logits, targets)


def listwise_kl(
    dual_scores: torch.Tensor,
    cross_scores: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """RocketQAv2's dynamic listwise distillation (Ren et al. 2021, eqs. 1-3).

    Over each query's candidate list :math:`P_q` (a positive and hard negatives)
    both models' scores become distributions::

        s~_de(q, p) = exp(s_de(q, p)) / sum_{p' in P_q} exp(s_de(q, p'))      (eq. 1)
        s~_ce(q, p) = exp(s_ce(q, p)) / sum_{p' in P_q} exp(s_ce(q, p'))      (eq. 2)

    and the loss is their KL divergence, averaged over the B queries::

        L_KL = 1/B * sum_q sum_{p in P_q} s~_ce(q, p) * log( s~_ce(q, p) / s~_de(q, p) )   (eq. 3)

    The paper prints eq. 3 with the two distributions the other way round;
    its released code (``kldiv_loss(x=log_softmax(dual), target=softmax(cross))``)
    computes KL(ce || de) as above, which pulls the dual encoder's distribution
    towards the cross-encoder's, and so does this.  Gradients flow into both
    score tensors: the re-ranker is trained by the distillation too ("dynamic").
    The paper's final loss is ``L_KL + L_sup`` with ``L_sup`` from
    :func:`listwise_softmax` on the cross-encoder's scores.

    Parameters
    ----------
    dual_scores, cross_scores : tensor of shape (B, L)
        The two models' scores of the same lists.
    mask : bool tensor of shape (B, L), optional
        ``False`` marks padding, left out of both distributions.
    """
    if dual_scores.shape != cross_scores.shape or dual_scores.dim() != 2:
        raise ValueError(
            f"dual {tuple(dual_scores.shape)} and cross {tuple(cross_scores.shape)} scores must be "
            "two equal (queries, list length) shapes"
        )
    if mask is not None:
        dual_scores = dual_scores.masked_fill(~mask, float("-inf"))
        cross_scores = cross_scores.masked_fill(~mask, float("-inf"))
    log_de = dual_scores.log_softmax(dim=-1)
    log_ce = cross_scores.log_softmax(dim=-1)
    terms = log_ce.exp() * (log_ce - log_de)
    if mask is not None:  # 0 * (-inf - -inf) is nan at padded entries
        terms = terms.masked_fill(~mask, 0.0)
    return terms.sum(dim=-1).mean()
