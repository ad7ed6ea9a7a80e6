# expect: GiB
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


batch_size = 65536
dim = 16384  # 4 GiB in and 4 GiB out in fp32


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
