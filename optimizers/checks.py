"""The checks ``Optimizer`` makes of its arguments and of each ``(gradient, variable)`` pair,
each failing with one line that names the culprit."""
import inspect

from framework.engine import backend
from framework.engine.tensor import Variable


def check_positive(value, what):
    if value is not None and (isinstance(value, bool) or not value > 0):
        raise ValueError(f"{what} must be a positive number or None, got {value!r}")


def check_fraction(value, what, owner, closed=False):
    """``value`` in [0, 1) (or [0, 1] when ``closed``), as Keras's betas and decay rates."""
    inside = 0 <= value <= 1 if closed else 0 <= value < 1
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not inside:
        raise ValueError(f"{owner}: {what} must be in [0, {'1]' if closed else '1)'}, "
                         f"got {value!r}")


def check_non_negative(value, what, owner):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{owner}: {what} must be >= 0, got {value!r}")


def check_adam_family(owner, beta_1, beta_2, epsilon):
    """Adam's, Nadam's and Adamax's arguments: betas in [0, 1), epsilon >= 0."""
    check_fraction(beta_1, "beta_1", owner)
    check_fraction(beta_2, "beta_2", owner)
    check_non_negative(epsilon, "epsilon", owner)


def check_common(weight_decay, use_ema, ema_momentum, ema_overwrite_frequency,
                 loss_scale_factor, gradient_accumulation_steps):
    """Keras's checks of the arguments every optimizer takes."""
    if weight_decay is not None and (isinstance(weight_decay, bool) or not weight_decay >= 0):
        raise ValueError(f"weight_decay must be a non-negative number or None, "
                         f"got {weight_decay!r}")
    if use_ema:
        check_fraction(ema_momentum, "ema_momentum", "Optimizer", closed=True)
        if ema_overwrite_frequency is not None and (
                isinstance(ema_overwrite_frequency, bool)
                or not isinstance(ema_overwrite_frequency, int) or ema_overwrite_frequency < 1):
            raise ValueError(f"ema_overwrite_frequency must be an integer >= 1 or None, "
                             f"got {ema_overwrite_frequency!r}")
    if gradient_accumulation_steps is not None and (
            isinstance(gradient_accumulation_steps, bool)
            or not isinstance(gradient_accumulation_steps, int)
            or gradient_accumulation_steps < 2):
        raise ValueError(f"gradient_accumulation_steps must be an integer >= 2 or None, "
                         f"got {gradient_accumulation_steps!r}")
    check_positive(loss_scale_factor, "loss_scale_factor")


def merged_signature(cls, base_init):
    """The signature ``cls`` shows (to ``inspect.signature``, the runner's config schema and
    help()): its own ``__init__``'s arguments, then, for an ``__init__`` that passes
    ``**kwargs`` on, the arguments of ``base_init`` it does not name itself, keyword-only, as
    Keras lists every optimizer's common arguments after its own."""
    own = list(inspect.signature(cls.__init__).parameters.values())[1:]
    if not own or own[-1].kind is not inspect.Parameter.VAR_KEYWORD:
        return inspect.Signature(own)
    own = own[:-1]
    names = {p.name for p in own}
    common = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
              for p in list(inspect.signature(base_init).parameters.values())[1:]
              if p.name not in names]
    return inspect.Signature(own + common)


def not_a_variable(variable, grad, index):
    hint = (" (the pairs are (gradient, variable): zip(grads, variables))"
            if isinstance(grad, Variable) else "")
    raise TypeError(f"apply_gradients(): item {index} pairs a gradient with a "
                    f"{type(variable).__name__}, not a fw.Variable{hint}")


def check_once(variables):
    """Refuse a variable that appears twice (its gradients must be added up first)."""
    seen = set()
    for variable in variables:
        if id(variable) in seen:
            raise ValueError(f"variable '{variable.path}' appears twice in apply_gradients(); "
                             f"add its gradients up and pass it once")
        seen.add(id(variable))


def check_gradient(raw, grad, variable, shape=None):
    """Say why the array ``raw`` of ``grad`` (of ``shape``, if not raw's) does not fit
    ``variable``, if it does not."""
    if not hasattr(raw, "shape") or not hasattr(raw, "dtype"):
        raise TypeError(f"the gradient for variable '{variable.path}' is a "
                        f"{type(grad).__name__}; expected a tensor or an array")
    if variable.dtype.kind != "f":
        raise ValueError(f"variable '{variable.path}' has dtype {variable.dtype.name}; only "
                         f"floating variables can be optimized")
    if (shape or tuple(raw.shape)) != variable.shape:
        raise ValueError(f"the gradient for variable '{variable.path}' has shape "
                         f"{shape or tuple(raw.shape)}, the variable {variable.shape}")
    if raw.dtype != variable.dtype:
        raise ValueError(f"the gradient for variable '{variable.path}' has dtype "
                         f"{raw.dtype.name}, the variable {variable.dtype.name}; cast it with "
                         f"fw.cast")
    if backend.device_of(raw) != variable.device:
        raise ValueError(f"the gradient for variable '{variable.path}' is on "
                         f"{backend.device_of(raw)}, the variable on {variable.device}")
