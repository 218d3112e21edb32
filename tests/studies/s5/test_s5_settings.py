"""S5's settings: built from the validated ``studies.s5`` section, every key read from it, unknown names rejected."""

from __future__ import annotations

import dataclasses

import pytest

from kgeval.studies.s5.settings import RANK_COLUMNS, S5Settings
from s5_samples import s5_section


def test_from_config_reads_every_key_of_the_section():
    section = s5_section()
    settings = S5Settings.from_config(section, memory_budget_mb=16, device="cpu")
    assert settings.strategies == tuple(section["strategies"])
    assert settings.platt_inits == tuple((float(a), float(b)) for a, b in section["platt_inits"])
    assert all(isinstance(v, float) for pair in settings.platt_inits for v in pair)
    for key in ("histogram_bins", "seed", "holdout_fraction", "union_negatives", "rank_type"):
        assert getattr(settings, key) == section[key]
    assert dataclasses.asdict(settings.platt) == section["platt"]
    assert settings.platt.procedures == {"both": ("converged", "paper")}.get(
        section["platt"]["procedure"], (section["platt"]["procedure"],)
    )
    assert settings.memory_budget_mb == 16.0 and settings.device == "cpu"
    # every field but the two from outside the section is a key of the section (its default lives in the schema)
    fields = {f.name for f in dataclasses.fields(S5Settings)} - {"memory_budget_mb", "device"}
    assert fields <= set(section)


@pytest.mark.parametrize(
    "key", ["strategies", "platt_inits", "histogram_bins", "rank_type", "union_negatives", "platt", "holdout_fraction"]
)
def test_from_config_has_no_defaults_of_its_own(key):
    section = s5_section()
    del section[key]
    with pytest.raises(KeyError, match=key):
        S5Settings.from_config(section, memory_budget_mb=16, device="cpu")


def test_settings_reject_unknown_names():
    settings = S5Settings.from_config(s5_section(), memory_budget_mb=16, device="cpu")
    with pytest.raises(ValueError, match="strategies"):
        dataclasses.replace(settings, strategies=("lcwa", "xyz"))
    with pytest.raises(ValueError, match="rank_type"):
        dataclasses.replace(settings, rank_type="median")
    with pytest.raises(ValueError, match="procedure"):
        dataclasses.replace(settings.platt, procedure="adam")
    assert set(RANK_COLUMNS) == {"optimistic", "realistic", "pessimistic"}
