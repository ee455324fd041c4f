"""Models trained with NP Explorer, in plain PyTorch (`npe export-pytorch`).

    import npe_models
    model = npe_models.load("exported-dir")
    mean, std = model(xc, yc, xt)
"""

from .loading import build, load

__all__ = ["build", "load"]
