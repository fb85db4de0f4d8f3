"""torch.nn.functional of the stand-in (tests/schema/stub_torch)."""


def relu(x):
    return x


def cross_entropy(output, target):
    return output
