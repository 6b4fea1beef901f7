import tensorflow as tf
# ruff: noqa: I001, E402, E501, E701, A001, F811  (the first line is the one line a port changes)
# The guide's cells as published (its indents): not formatted.
# fmt: off

# TensorFlow's "Better performance with the tf.data API" guide
# (site/en/guide/data_performance.ipynb, tensorflow/docs at TF 2.21): its
# benchmark cells (prefetch, interleave, parallel map, cache, vectorized map),
# in order and unchanged. Lines marked "harness:" are not the guide's: they
# record the elements each benchmark reads and leave out the times it prints,
# which differ from run to run. The timeline cells after them draw with
# tf.zeros, tf.tile and matplotlib, which tfrx does not have.
#
#     python tests/porting/data_performance.py OUT.pickle [WORKDIR]

from _harness import print, report, save, start, state  # harness: tests/porting/_harness.py
WORKDIR, RESULTS = start(tf)  # harness:


# ---- cell 1
import time

# ---- cell 2
class ArtificialDataset(tf.data.Dataset):
    def _generator(num_samples):
        # Opening the file
        time.sleep(0.03)
        
        for sample_idx in range(num_samples):
            # Reading data (line, record) from the file
            time.sleep(0.015)
            
            yield (sample_idx,)
    
    def __new__(cls, num_samples=3):
        return tf.data.Dataset.from_generator(
            cls._generator,
            output_signature = tf.TensorSpec(shape = (1,), dtype = tf.int64),
            args=(num_samples,)
        )

# ---- cell 3
def benchmark(dataset, num_epochs=2):
    start_time = time.perf_counter()
    for epoch_num in range(num_epochs):
        for sample in dataset:
            # Performing a training step
            time.sleep(0.01)
    print("Execution time:", time.perf_counter() - start_time)

timed_benchmark = benchmark  # harness: each benchmark's elements are recorded, its time is not


def benchmark(dataset, num_epochs=2):  # type: ignore[no-redef]  # harness:
    report(f"elements/{len(RESULTS):04d}", sorted(sample.numpy().tolist() for sample in dataset))  # harness: sorted, as interleave's default cycle_length is the machine's core count
    state.recording = False  # harness:
    timed_benchmark(dataset, num_epochs)  # harness:
    state.recording = True  # harness:


# ---- cell 4
benchmark(ArtificialDataset())

# ---- cell 5
benchmark(
    ArtificialDataset()
    .prefetch(tf.data.AUTOTUNE)
)

# ---- cell 6
benchmark(
    tf.data.Dataset.range(2)
    .interleave(lambda _: ArtificialDataset())
)

# ---- cell 7
benchmark(
    tf.data.Dataset.range(2)
    .interleave(
        lambda _: ArtificialDataset(),
        num_parallel_calls=tf.data.AUTOTUNE
    )
)

# ---- cell 8
def mapped_function(s):
    # Do some hard pre-processing
    tf.py_function(lambda: time.sleep(0.03), [], ())
    return s

# ---- cell 9
benchmark(
    ArtificialDataset()
    .map(mapped_function)
)

# ---- cell 10
benchmark(
    ArtificialDataset()
    .map(
        mapped_function,
        num_parallel_calls=tf.data.AUTOTUNE
    )
)

# ---- cell 11
benchmark(
    ArtificialDataset()
    .map(  # Apply time consuming operations before cache
        mapped_function
    ).cache(
    ),
    5
)

# ---- cell 12
fast_dataset = tf.data.Dataset.range(10000)

def fast_benchmark(dataset, num_epochs=2):
    start_time = time.perf_counter()
    for _ in tf.data.Dataset.range(num_epochs):
        for _ in dataset:
            pass
    tf.print("Execution time:", time.perf_counter() - start_time)
    
def increment(x):
    return x+1

timed_fast_benchmark = fast_benchmark  # harness:


def fast_benchmark(dataset, num_epochs=2):  # type: ignore[no-redef]  # harness:
    batches = [batch.numpy() for batch in dataset]  # harness:
    report(f"batches/{len(RESULTS):04d}", {"count": len(batches), "first": batches[0], "last": batches[-1]})  # harness:
    state.recording = False  # harness:
    timed_fast_benchmark(dataset, num_epochs)  # harness:
    state.recording = True  # harness:


tf.print = print  # harness: tf.print writes to the log, not through print

# ---- cell 13
fast_benchmark(
    fast_dataset
    # Apply function one item at a time
    .map(increment)
    # Batch
    .batch(256)
)

# ---- cell 14
fast_benchmark(
    fast_dataset
    .batch(256)
    # Apply function on a batch of items
    # The tf.Tensor.__add__ method already handle batches
    .map(increment)
)

save()  # harness:
