"""kgeval.lp.engine.training.patches: the patched loop gives bit-identical models to pykeen.pipeline(), and every patch
is undone when the block closes."""

from __future__ import annotations

import pytest

from conftest import SMALL_TRAINING_SPEC
from kgeval.lp.engine.training.patches import fast_training
from kgeval.lp.training import train_model
from training_reference import assert_trains_like_pipeline

SPEC = SMALL_TRAINING_SPEC


@pytest.mark.parametrize(("model", "loss"), [("DistMult", "marginranking"), ("TransE", None), ("ComplEx", "softplus")])
def test_fast_training_equals_pipeline(nations_lp, model, loss):
    # pipeline() without a loss uses the loss resolver's default (margin ranking), a model built without one its own
    # default (softplus for ComplEx): equal only where the two agree or the loss is named
    spec = {**SPEC, "model": model, "loss": loss}
    assert_trains_like_pipeline(spec, 3, nations_lp)


# FB15k-237's settings in small: many negatives per positive, softplus, the complex-valued models, and
# PyKEEN's LCWA loop; batches large enough that glibc would mmap the biggest temporaries (> 128 KiB) by default
@pytest.mark.parametrize(
    ("model", "loop", "negatives"),
    [("DistMult", "slcwa", 32), ("ComplEx", "slcwa", 32), ("RotatE", "slcwa", 32), ("DistMult", "lcwa", None)],
)
def test_fast_training_equals_pipeline_many_negatives_and_lcwa(nations_lp, model, loop, negatives):
    spec = {
        "model": model,
        "model_kwargs": {"embedding_dim": 16},
        "loss": "softplus",
        "optimizer_kwargs": {"lr": 0.01},
        "training_loop": loop,
        "training_kwargs": {"num_epochs": 2, "batch_size": 512},
    }
    if negatives:
        spec["negative_sampler_kwargs"] = {"num_negs_per_pos": negatives}
    assert_trains_like_pipeline(spec, 5, nations_lp)


def test_fast_training_patches_are_undone(nations_lp):
    import pykeen.models.base as model_base
    import pykeen.training.training_loop as loop_module

    import pykeen.nn.modules as modules
    import pykeen.nn.representation as representation_module
    import pykeen.regularizers as regularizers

    gc_before, device_before = loop_module.gc, model_base.Model.device
    representation_device_before = representation_module.Representation.device
    norms_before = (modules.negative_norm, regularizers.lp_norm, representation_module.Representation.forward)
    interactions_before = (modules.TransEInteraction.forward, modules.ComplExInteraction.forward)
    result = train_model(nations_lp, SPEC, seed=0)
    with pytest.raises(RuntimeError):
        with fast_training(result.model):
            raise RuntimeError("boom")
    assert loop_module.gc is gc_before
    assert model_base.Model.device is device_before
    assert representation_module.Representation.device is representation_device_before
    assert (modules.negative_norm, regularizers.lp_norm, representation_module.Representation.forward) == norms_before
    assert (modules.TransEInteraction.forward, modules.ComplExInteraction.forward) == interactions_before
