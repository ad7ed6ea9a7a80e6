# expect: dtype torch.complex64
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.abs()


batch_size, dim = 64, 128


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.complex64)]


def get_init_inputs():
    return []
