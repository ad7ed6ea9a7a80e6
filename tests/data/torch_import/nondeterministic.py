# expect: not deterministic
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + torch.rand_like(x)


batch_size, dim = 64, 128


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
