"""ConvCNP, off the grid in 1-D and on a grid in 2-D (paper F.1 and F.2;
core/src/models/kinds/convcnp/convcnp.cpp). 1-D: a SetConv encoder onto a uniform grid anchored
at the task's leftmost context point (a density channel and the data normalised by it, RBF
weights with a learned length scale), a U-Net, a SetConv decoder to the targets and a Gaussian
head. 2-D: the context rasterised onto grid cells (inputs are cell coordinates, rounded), a CNN
with same padding, a Gaussian head per cell, read at the targets' cells; further inputs (time)
select independent slices."""

import math
from typing import List, Optional, Tuple

import torch
from torch import nn

from .common import gaussian_head, model_inputs

OPTIONS_1D = ("dim_x", "dim_y", "dim_features", "points_per_unit", "conv_channels", "kernel_size",
              "unet_depth", "max_grid_points", "heteroscedastic", "min_stddev", "input_scale")
OPTIONS_2D = ("dim_x", "dim_y", "dim_features", "conv_channels", "kernel_size", "cnn_layers",
              "heteroscedastic", "min_stddev", "input_scale")

class UNet1d(nn.Module):
    """An input convolution, `depth` stages down (convolution, average pooling by 2) and `depth`
    up (linear up-sampling by 2, the skip connection concatenated, convolution 2C -> C). npe
    names the convolutions in, down<i> and up<i>; here input, down.<i> and up_reversed.<j>
    (the up stages in the order they run)."""

    def __init__(self, in_channels: int, channels: int, kernel_size: int, depth: int):
        super().__init__()

        def conv(cin, cout):
            return nn.Conv1d(cin, cout, kernel_size, padding=kernel_size // 2)
        self.input = conv(in_channels, channels)
        self.down = nn.ModuleList([conv(channels, channels) for _ in range(depth)])
        self.up_reversed = nn.ModuleList([conv(2 * channels, channels) for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.input(x))
        skips: List[torch.Tensor] = []
        for down in self.down:
            skips.append(x)
            x = nn.functional.avg_pool1d(torch.relu(down(x)), 2)
        for up in self.up_reversed:
            skip = skips.pop()
            x = nn.functional.interpolate(x, size=[skip.shape[-1]], mode="linear",
                                          align_corners=False)
            x = torch.relu(up(torch.cat([x, skip], 1)))
        return x


def rename_1d(name: str, options: dict) -> str:
    """npe's names of the 1-D ConvCNP's U-Net onto this module's."""
    depth = options["unet_depth"]
    if name.startswith("unet.in."):
        return "unet.input." + name[len("unet.in."):]
    for stage in ("down", "up"):
        prefix = "unet." + stage
        if name.startswith(prefix):
            index, rest = name[len(prefix):].split(".", 1)
            if stage == "up":
                return "unet.up_reversed.%d.%s" % (depth - 1 - int(index), rest)
            return "unet.down.%s.%s" % (index, rest)
    return name


class ConvCNP(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        if options["dim_x"] != 1:
            raise ValueError("model.json's ConvCNP has dim_x %d; the off-grid ConvCNP is 1-D" %
                             options["dim_x"])
        channels = options["conv_channels"]
        self.dim_y = options["dim_y"]
        self.input_scale = float(options["input_scale"])
        self.dim_inputs = options["dim_x"] - options["dim_features"]
        self.spacing = 1.0 / float(options["points_per_unit"])
        self.granularity = 1 << options["unet_depth"]
        self.margin = (options["kernel_size"] // 2) * (2 << options["unet_depth"])
        self.max_grid_points = options["max_grid_points"]
        self.log_encoder_lengthscale = nn.Parameter(torch.zeros([1]))
        self.log_decoder_lengthscale = nn.Parameter(torch.zeros([1]))
        self.unet = UNet1d(1 + self.dim_y, channels, options["kernel_size"],
                           options["unet_depth"])
        self.head = gaussian_head(channels, channels, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, True, self.input_scale, self.dim_inputs)
        b, nc, nt = xc.shape[0], xc.shape[1], xt.shape[1]
        if nc + nt == 0:
            empty = xt.new_zeros([b, 0, self.dim_y])
            return empty, empty.clone()
        # The grid is anchored at the leftmost context point (else target), so that the data
        # moved by any shift give the same grid and alignment.
        x_c = xc[..., 0]
        x_t = xt[..., 0]
        origin = (x_c if nc > 0 else x_t).min(1, keepdim=True)[0]
        x_c = x_c - origin
        x_t = x_t - origin
        all_x = torch.cat([x_c, x_t], 1)
        lo = all_x.min().item() / self.spacing
        hi = all_x.max().item() / self.spacing
        g = self.granularity
        needed = math.ceil(hi) - math.floor(lo) + 2.0 * self.margin + 2.0 * g
        if not needed <= float(self.max_grid_points):
            raise RuntimeError("ConvCNP: the inputs need more grid points than max_grid_points")
        first = (int(math.floor(lo)) - self.margin) // g * g
        count = int(math.ceil(hi)) + self.margin - first + 1
        count = (count + g - 1) // g * g
        grid = ((torch.arange(count, dtype=torch.float64, device=xt.device) + float(first)) *
                self.spacing).to(xt.dtype)
        if nc == 0:
            channels = xt.new_zeros([b, 1 + self.dim_y, count])
        else:
            encoder_lengthscale = self.log_encoder_lengthscale.exp()
            d = grid.view(1, count, 1) - x_c.unsqueeze(1)
            w = torch.exp(-0.5 * (d / encoder_lengthscale).square())
            density = w.sum(-1, keepdim=True)
            data = w.matmul(yc) / (density + 1e-8)
            channels = torch.cat([density, data], -1).transpose(1, 2)
        features = self.unet(channels)
        decoder_lengthscale = self.log_decoder_lengthscale.exp()
        d = x_t.unsqueeze(-1) - grid.view(1, 1, count)
        w = torch.exp(-0.5 * (d / decoder_lengthscale).square())
        return self.head(w.matmul(features.transpose(1, 2)))


class ConvCNP2d(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        self.dim_y = options["dim_y"]
        self.dim_features = options["dim_features"]
        self.dim_coordinates = options["dim_x"] - options["dim_features"]
        if self.dim_coordinates < 2:
            raise ValueError("model.json's ConvCNP 2-D has fewer than 2 coordinates")
        self.input_scale = float(options["input_scale"])
        self.margin = options["cnn_layers"] * (options["kernel_size"] // 2)
        cin = 1 + self.dim_y + (1 + self.dim_features if self.dim_features > 0 else 0)
        convs = []
        for _ in range(options["cnn_layers"]):
            convs.append(nn.Conv2d(cin, options["conv_channels"], options["kernel_size"],
                                   padding=options["kernel_size"] // 2))
            cin = options["conv_channels"]
        self.convs = nn.ModuleList(convs)
        self.head = gaussian_head(options["conv_channels"], options["conv_channels"], options)

    def run_grid(self, values: torch.Tensor, mask: torch.Tensor,
                 features: Optional[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        m = (mask != 0).to(values.dtype).unsqueeze(1)
        masked = values.permute(0, 3, 1, 2) * m
        x = torch.cat([m, masked], 1)
        if features is not None:
            x = torch.cat([x, features.permute(0, 3, 1, 2)], 1)
        for conv in self.convs:
            x = torch.relu(conv(x))
        return self.head(x.permute(0, 2, 3, 1))

    def flat_index(self, cells: torch.Tensor, lo: torch.Tensor,
                   extent: torch.Tensor) -> torch.Tensor:
        """Each point's cell: slice-major, then row, then column."""
        rel = cells - lo
        slice_index = torch.zeros_like(rel[..., 0])
        for d in range(2, self.dim_coordinates):
            slice_index = slice_index * int(extent[d].item()) + rel[..., d]
        return (slice_index * int(extent[0].item()) + rel[..., 0]) * int(extent[1].item()) + \
            rel[..., 1]

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, True, self.input_scale, self.dim_coordinates)
        b, nc, nt = xc.shape[0], xc.shape[1], xt.shape[1]
        dc, df, dy = self.dim_coordinates, self.dim_features, self.dim_y
        cells_c = xc[..., :dc].round().to(torch.long)
        cells_t = xt[..., :dc].round().to(torch.long)
        every = torch.cat([cells_c, cells_t], 1)
        if every.shape[1] == 0 or nt == 0:
            empty = xt.new_zeros([b, nt, dy])
            return empty, empty.clone()
        lo = every.amin(dim=[0, 1])
        hi = every.amax(dim=[0, 1])
        lo[:2] -= self.margin
        hi[:2] += self.margin
        extent = hi - lo + 1
        if float(extent.to(torch.float64).prod().item()) > float(1 << 18):  # npe's limit
            raise RuntimeError("ConvCNP 2-D: the inputs span more grid cells than its limit")
        rows = int(extent[0].item())
        cols = int(extent[1].item())
        slices = 1
        for d in range(2, dc):
            slices *= int(extent[d].item())
        total = slices * rows * cols

        values = xt.new_zeros([b, total, dy])
        counts = xt.new_zeros([b, total, 1])
        if nc > 0:
            flat = self.flat_index(cells_c, lo, extent)
            values.scatter_add_(1, flat.unsqueeze(-1).expand(b, nc, dy), yc)
            counts.scatter_add_(1, flat.unsqueeze(-1), xt.new_ones([b, nc, 1]))
        mask = (counts.squeeze(-1) > 0).view(b * slices, rows, cols)
        values = (values / counts.clamp_min(1.0)).view(b * slices, rows, cols, dy)
        features: Optional[torch.Tensor] = None
        if df > 0:
            # The features of every point of the task, context and targets, averaged per cell.
            known = xt.new_zeros([b, total, 1 + df])
            point_features = torch.cat([xc, xt], 1)[..., dc:dc + df]
            flat = self.flat_index(every, lo, extent).unsqueeze(-1)
            known.scatter_add_(1, flat.expand(b, nc + nt, 1 + df),
                               torch.cat([xt.new_ones([b, nc + nt, 1]), point_features], -1))
            density = known[..., :1]
            mean = known[..., 1:] / density.clamp_min(1.0)
            features = torch.cat([(density > 0).to(xt.dtype), mean], -1).view(
                b * slices, rows, cols, 1 + df)
        mean, stddev = self.run_grid(values, mask, features)
        flat_t = self.flat_index(cells_t, lo, extent).unsqueeze(-1).expand(b, nt, dy)
        return (mean.reshape(b, total, dy).gather(1, flat_t),
                stddev.reshape(b, total, dy).gather(1, flat_t))
