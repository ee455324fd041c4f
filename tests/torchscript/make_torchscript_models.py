#!/usr/bin/env python3
"""Writes the TorchScript neural processes the tests open (run with Debian's python3-torch).

  make_torchscript_models.py OUT_FOLDER

Models, each scripted with torch.jit.script and saved as a researcher would:
  te_np.pt        translation equivariant by construction (sees only xt - xc), with npe.json
  absolute_np.pt  a CNP on absolute inputs, no npe.json (name, task and dimensions assumed)
  joint_np.pt     an exact SE-kernel GP posterior that also returns its covariance
  image_np.pt     a CNP with D_x = 2, D_y = 1 and npe.json naming the tfmnist task
and files that break the contract, one way each (wrong_signature.pt, wrong_shape.pt,
nan_std.pt, negative_std.pt, throws.pt, newer_pytorch.pt, truncated.pt, not_torchscript.pt,
bad_metadata.pt). Beside them: context.csv and targets.csv, one 1-D task, and
<model>.expected.csv, PyTorch's own mean and std there.
"""

import json
import os
import sys
import zipfile
from typing import Tuple

import torch
from torch import nn


class TranslationEquivariantNP(nn.Module):
    """An attention over the context whose weights and values depend on xt - xc only."""

    def __init__(self, width: int = 32):
        super().__init__()
        self.weight = nn.Sequential(nn.Linear(1, width), nn.ReLU(), nn.Linear(width, 1))
        self.value = nn.Sequential(nn.Linear(2, width), nn.ReLU(), nn.Linear(width, 2))

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        diff = xt.unsqueeze(2) - xc.unsqueeze(1)  # [B, Nt, Nc, 1]
        w = torch.softmax(self.weight(diff).squeeze(-1), dim=-1)  # [B, Nt, Nc]
        pairs = torch.cat([diff, yc.unsqueeze(1).expand(-1, xt.shape[1], -1, -1)], -1)
        h = (w.unsqueeze(-1) * self.value(pairs)).sum(2)  # [B, Nt, 2]
        mean, raw = h.chunk(2, -1)
        return mean, 0.05 + nn.functional.softplus(raw)


class AbsoluteCNP(nn.Module):
    def __init__(self, dim_x: int = 1, dim_y: int = 1, width: int = 32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim_x + dim_y, width), nn.ReLU(),
                                     nn.Linear(width, width))
        self.decoder = nn.Sequential(nn.Linear(width + dim_x, width), nn.ReLU(),
                                     nn.Linear(width, 2 * dim_y))

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        r = self.encoder(torch.cat([xc, yc], -1)).mean(1, keepdim=True)
        h = self.decoder(torch.cat([r.expand(-1, xt.shape[1], -1), xt], -1))
        mean, raw = h.chunk(2, -1)
        return mean, 0.01 + nn.functional.softplus(raw)


def se_kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.exp(-0.5 * ((a.unsqueeze(2) - b.unsqueeze(1)) / 0.5).pow(2).sum(-1))


class GaussianProcess(nn.Module):
    """SE kernel (lengthscale 0.5, unit variance), noise 0.1: mean, std and covariance."""

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        k = se_kernel
        eye = torch.eye(xc.shape[1], dtype=xc.dtype, device=xc.device)
        chol = torch.linalg.cholesky(k(xc, xc) + 0.01 * eye)
        kct = k(xc, xt)
        a = torch.cholesky_solve(kct, chol)
        mean = (a.transpose(1, 2) @ yc)
        cov = k(xt, xt) - kct.transpose(1, 2) @ a
        cov = cov + 0.01 * torch.eye(xt.shape[1], dtype=xt.dtype, device=xt.device)
        std = torch.diagonal(cov, dim1=1, dim2=2).clamp_min(1e-9).sqrt().unsqueeze(-1)
        return mean, std, cov


class WrongSignature(nn.Module):
    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return x, x


class WrongShape(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = AbsoluteCNP()

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        mean, std = self.inner(xc, yc, xt)
        return torch.cat([mean, mean], -1), std


class NanStd(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = AbsoluteCNP()

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        mean, std = self.inner(xc, yc, xt)
        return mean, std * float("nan")


class NegativeStd(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = AbsoluteCNP()

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        mean, std = self.inner(xc, yc, xt)
        return mean, -std


class Throws(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = AbsoluteCNP()

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if xc.shape[1] > 0:
            raise RuntimeError("this model refuses every context")
        return self.inner(xc, yc, xt)


def save(model: nn.Module, path: str, metadata=None) -> torch.jit.ScriptModule:
    scripted = torch.jit.script(model.eval())
    extra = {"npe.json": json.dumps(metadata)} if metadata is not None else {}
    torch.jit.save(scripted, path, _extra_files=extra)
    return scripted


def rewrite_version(source: str, target: str, version: str) -> None:
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("/version"):
                data = (version + "\n").encode()
            zout.writestr(item, data)


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    path = lambda name: os.path.join(out, name)

    xc = torch.tensor([[[-1.5], [-0.4], [0.3], [1.1], [2.0]]])
    yc = torch.tensor([[[0.2], [-0.7], [0.5], [1.3], [-0.1]]])
    xt = torch.linspace(-3.0, 3.0, 41).view(1, 41, 1)
    with open(path("context.csv"), "w") as f:
        f.write("x,y\n" + "".join(f"{float(x)!r},{float(y)!r}\n" for x, y in
                                   zip(xc.flatten(), yc.flatten())))
    with open(path("targets.csv"), "w") as f:
        f.write("x\n" + "".join(f"{float(x)!r}\n" for x in xt.flatten()))

    models = {
        "te_np.pt": save(TranslationEquivariantNP(), path("te_np.pt"),
                         {"name": "Test TE-NP", "task": "gp1d", "translation_equivariant": True}),
        "absolute_np.pt": save(AbsoluteCNP(), path("absolute_np.pt")),
        "joint_np.pt": save(GaussianProcess(), path("joint_np.pt"),
                            {"name": "Scripted GP", "task": "gp1d", "covariance": True,
                             "translation_equivariant": True}),
    }
    save(AbsoluteCNP(dim_x=2), path("image_np.pt"), {"name": "Image CNP", "task": "tfmnist",
                                                     "input_scale": 0.1})
    for name, scripted in models.items():
        with torch.no_grad():
            mean, std = scripted(xc, yc, xt)[:2]
        with open(path(name + ".expected.csv"), "w") as f:
            f.write("x,mean,std\n" + "".join(
                f"{float(x)!r},{float(m)!r},{float(s)!r}\n"
                for x, m, s in zip(xt.flatten(), mean.flatten(), std.flatten())))

    save(WrongSignature(), path("wrong_signature.pt"))
    save(WrongShape(), path("wrong_shape.pt"), {"task": "gp1d"})
    save(NanStd(), path("nan_std.pt"), {"task": "gp1d"})
    save(NegativeStd(), path("negative_std.pt"), {"task": "gp1d"})
    save(Throws(), path("throws.pt"), {"task": "gp1d"})
    save(AbsoluteCNP(), path("bad_metadata.pt"), {"task": "gp1d", "dim_z": 3})
    rewrite_version(path("absolute_np.pt"), path("newer_pytorch.pt"), "99")
    with open(path("absolute_np.pt"), "rb") as f:
        whole = f.read()
    with open(path("truncated.pt"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    with zipfile.ZipFile(path("not_torchscript.pt"), "w") as z:
        z.writestr("notes/readme.txt", "a zip, but not a TorchScript archive")
    print(torch.__version__)


if __name__ == "__main__":
    main()
