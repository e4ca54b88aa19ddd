"""Draws for the stabilising methods' identities and the tables (Fu et al. 2023, Sec 3)."""

from __future__ import annotations

import numpy as np

from ntsim.theory import stability as st


def test_tables_run_is_the_printed_avg_discrepancy():
    run = st.simulate_tables(None, st.TablesSetting())
    assert run.discrepancy.size == len(run.labels) == 48  # 4 tables × 6 methods × mean/std
    table = st.stability_table("table3")  # independent: the AVG of FineTune's means by hand
    fine_tune = table.methods.index("FineTune")
    expected = table.avg_mean[fine_tune] - np.mean(table.means[fine_tune])
    index = run.labels.index("table3 FineTune AVG mean")
    np.testing.assert_allclose(run.discrepancy[index], expected, atol=1e-12)


def test_mmr_identity_draws_have_both_classes_and_eq8(x64, key):
    run = st.simulate_mmr_identity(key, st.MMRIdentitySetting(instances=3, n=6, k=2))
    labels = np.asarray(run.labels)
    assert np.all((labels > 0).any(1)) and np.all((labels < 0).any(1))
    e, y = np.asarray(run.features[0]), labels[0]
    expected = 1 / (1 + np.linalg.norm(e[y > 0].mean(0) - e[y < 0].mean(0)))
    np.testing.assert_allclose(run.plain[0], expected, rtol=1e-12)


def test_mhloss_identity_draws_single_head_closed_form(x64, key):
    run = st.simulate_mhloss_identity(key, st.MHLossIdentitySetting(instances=2, n=5, k=2,
                                                                    heads=1))  # fmt: skip
    e, y, w = (np.asarray(a[0]) for a in (run.features, run.labels, run.heads))
    margins = y * (e @ w[0, :-1] - w[0, -1])
    np.testing.assert_allclose(run.loss[0], np.mean(np.logaddexp(0, -margins)), rtol=1e-12)
    np.testing.assert_allclose(run.pred[0], e @ w[0, :-1] - w[0, -1], rtol=1e-12)
