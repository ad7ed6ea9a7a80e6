# expect: forward raises
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b  # [M, K] @ [M, K]: the inner sizes differ


M, K = 64, 48


def get_inputs():
    return [torch.rand(M, K), torch.rand(M, K)]


def get_init_inputs():
    return []
