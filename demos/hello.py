"""A first program to run under the plugin: it behaves exactly as without it."""


def mean(xs):
    return sum(xs) / len(xs)


def variance(xs):
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)


data = [float(i % 7) for i in range(1000)]
print(f"mean={mean(data):.4f} variance={variance(data):.4f}")
