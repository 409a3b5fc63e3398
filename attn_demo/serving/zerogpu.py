"""Where the app's model calls run. On Hugging Face's shared ZeroGPU hardware a Space holds a GPU
only while a function decorated with `spaces.GPU` runs, and that function runs in a worker process
forked from the app, its arguments and its result pickled across. So every model call the app
makes goes through `run`: one decorated function whose arguments are plain data and the number of
a translator in LOADED, which a worker forked after the models loaded holds too.

Where the `spaces` package is not installed (anywhere but a Space) nothing is decorated; where it is
installed off ZeroGPU, `spaces.GPU` itself does nothing. Either way the call runs here, on the
translator's own device (pick_device: CUDA when present, else the CPU).

    model.run(Translator.beam, text, 5, 5)   # = translator.beam(text, 5, 5), on the GPU where there is one

A call made outside a request (the MicroBatcher's thread decodes for many users at once, and the
app warms its cache at start) carries no user, so ZeroGPU counts it to the Space, not to a visitor.
"""
import weakref

# the most one call may hold a ZeroGPU device: a shorter promise is scheduled sooner, and the longest call
# (integrated gradients of a 50-word sentence) takes a few seconds
GPU_SECONDS = 20
LOADED = weakref.WeakValueDictionary()  # id(translator) → translator, filled as models load (catalogue.Model)


def on_gpu(function):
    """`function` decorated with spaces.GPU where the spaces package is importable, else `function` itself."""
    try:
        import spaces
    except ImportError:
        return function
    return spaces.GPU(duration=GPU_SECONDS)(function)


def load(translator) -> None:
    """Make `translator` reachable by `run`, from this process and from any worker forked after now."""
    LOADED[id(translator)] = translator


def run(translator, function, *args, **kwargs):
    """function(translator, *args, **kwargs): a Translator method or a function taking the translator
    first, run where the GPU is held (a ZeroGPU worker) or here. A ValueError (input the model cannot
    read) is raised here with its own message."""
    result, refused = _run(id(translator), function, args, kwargs)
    if refused is not None:
        raise refused
    return result


@on_gpu
def _run(number: int, function, args: tuple, kwargs: dict) -> tuple:
    """(result, None), or (None, the ValueError): returned rather than raised, since ZeroGPU would
    replace an exception from its worker with its own, and the page's message with it."""
    try:
        return function(LOADED[number], *args, **kwargs), None
    except ValueError as refused:
        return None, refused
