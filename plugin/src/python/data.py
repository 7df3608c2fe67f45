"""symtrace.utils.data: torch.utils.data's datasets and loader, single-process: `Dataset`,
`IterableDataset`, `TensorDataset`, `Subset`, `ConcatDataset`, `random_split`, `DataLoader`
(batches in order or shuffled by symtrace's seeded generator, `drop_last`, `collate_fn`) and
`default_collate` (tensors stacked, numbers made tensors, sequences and dicts collated by
position and key). `num_workers` and the pinning and prefetching switches are taken; batches
are always made in the calling process. `_st` is the `symtrace` module, given by the loader."""

import collections


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Item `i` is the tuple of each tensor's row `i`."""

    def __init__(self, *tensors):
        if any(tensors[0].shape[0] != t.shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index = len(self) + index
        start = 0
        for d, end in zip(self.datasets, self.cumulative_sizes):
            if index < end:
                return d[index - start]
            start = end
        raise IndexError("index out of range")


def random_split(dataset, lengths, generator=None):
    """`dataset` cut into subsets of `lengths` (counts, or fractions summing to 1) of a
    random permutation."""
    n = len(dataset)
    if all(0 <= f <= 1 for f in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) <= 1:
        counts = [int(f * n) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _st.randperm(n, generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[offset:offset + length]))
        offset += length
    return out


def default_collate(batch):
    """One batch from a list of samples, as torch's default_collate makes it."""
    elem = batch[0]
    if isinstance(elem, _st.Tensor):
        return _st.stack(batch, 0)
    if isinstance(elem, bool):
        return _st.tensor(batch)
    if isinstance(elem, int):
        return _st.tensor(batch, dtype=_st.int64)
    if isinstance(elem, float):
        return _st.tensor(batch, dtype=_st.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(list(s)) for s in zip(*batch)]
        return tuple(collated) if isinstance(elem, tuple) else collated
    raise TypeError(f"default_collate: batch must contain tensors, numbers, dicts or lists; "
                    f"found {type(elem)}")


class DataLoader:
    """Batches of `batch_size` samples of `dataset`, in order or (with `shuffle`) in a
    random order drawn anew for each pass; the last short batch kept unless `drop_last`."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, generator=None, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device=""):
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.drop_last = drop_last
        self.generator = generator

    def _indices(self):
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        return _st.randperm(n, generator=self.generator).tolist() if self.shuffle else list(range(n))

    def __iter__(self):
        if isinstance(self.dataset, IterableDataset):
            yield from self._iterable_batches()
            return
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
            return
        indices = self._indices()
        if self.batch_size is None:
            for i in indices:
                yield self.dataset[i]
            return
        for start in range(0, len(indices), self.batch_size):
            chunk = indices[start:start + self.batch_size]
            if len(chunk) < self.batch_size and self.drop_last:
                return
            yield self.collate_fn([self.dataset[i] for i in chunk])

    def _iterable_batches(self):
        if self.batch_size is None:
            yield from self.dataset
            return
        chunk = []
        for sample in self.dataset:
            chunk.append(sample)
            if len(chunk) == self.batch_size:
                yield self.collate_fn(chunk)
                chunk = []
        if chunk and not self.drop_last:
            yield self.collate_fn(chunk)

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


DATA = {
    "Dataset": Dataset,
    "IterableDataset": IterableDataset,
    "TensorDataset": TensorDataset,
    "Subset": Subset,
    "ConcatDataset": ConcatDataset,
    "random_split": random_split,
    "default_collate": default_collate,
    "DataLoader": DataLoader,
}
