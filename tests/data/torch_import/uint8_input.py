# expect: dtype torch.uint8
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.float() / 255


batch_size, dim = 64, 128


def get_inputs():
    return [torch.randint(0, 256, (batch_size, dim), dtype=torch.uint8)]


def get_init_inputs():
    return []
