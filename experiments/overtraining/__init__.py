"""Theory figures for Springer et al. 2025 (overtraining): the two-layer linear model of Sec 4.

The paper has no figures of its linear theory; these are the analogues of its LLM figures
(Fig 3 right: perturbed loss vs budget; Fig 4: Δ_pre; Fig 5 top: post-FT loss vs budget)
of the theory (Sec 4), plus one labelled extension (early-stopped fine-tuning).
"""
