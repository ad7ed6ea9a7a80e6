# expect: live dropout
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.drop = nn.Dropout(p=0.25)

    def forward(self, x):
        return self.drop(torch.relu(self.linear(x)))


batch_size, in_features, out_features = 128, 256, 64


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
