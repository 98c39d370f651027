"""``Optimizer``: per-variable slots created lazily, and an update step on raw arrays.

``apply_gradients`` takes any iterable of ``(gradient, variable)`` pairs: it reads the iterable
once, checks every pair before touching any variable (so a bad pair leaves the model as it was),
skips ``None`` gradients with one warning, unscales (``loss_scale_factor``), accumulates
(``gradient_accumulation_steps``), clips, applies Keras's decoupled weight decay, runs the
subclass's ``_update_step`` in place, outside any tape, and keeps the moving averages
(``use_ema``). Slots (moments) are created the first time a variable is seen, so one optimizer
per layer, or any subset of variables at any time, needs no set-up. Scratch space for the
update's temporary values is kept per dtype and reused, so a step allocates no arrays beyond
what clipping needs.

An optimizer whose ``_update_step`` is elementwise says so (``elementwise_update = True``, as
the built-in ones do): then small host variables of one dtype are updated together, as one flat
array (a "multi-tensor" update, like PyTorch's foreach optimizers), since a small variable's
update costs mostly NumPy's fixed cost per call, which one call on the concatenation pays once;
and a big variable is updated a block at a time, each block's passes running in the cache
(``optimizers.layout``). Any other step (one that takes a norm, say) sees each variable whole
and alone: a subclass that overrides ``_update_step`` is updated that way unless it declares
its own step elementwise too.
"""
import math
import re
import warnings

import numpy as np

import framework as fw
from framework.engine import backend
from framework.tuning import kernels
from framework.engine.context import before_update, holders
from framework.engine.indexed_slices import IndexedSlices
from framework.registry import Registry
from framework.engine.tensor import Tensor, Variable, mark_updated, wrap
from framework.engine.context import replayed

from . import checks
from .common import ACCUMULATOR, AVERAGE, KerasCommon
from .layout import Plan, blocks
from .schedules import LearningRateSchedule
from .sparse import Moments, dense_gradients

# The optimizers by Keras's names (``"adam"``): each optimizer class registers itself.
OPTIMIZERS = Registry("optimizer")


class Optimizer(KerasCommon):
    """Base class of the optimizers; subclasses define their slots and ``_update_step``.

    The arguments are Keras's common ones: ``weight_decay`` (decoupled: ``w -= w * wd * lr``
    before each update), clipping, ``use_ema`` (a moving average of each variable, kept beside
    it and written into it by ``finalize_variable_values``, or every
    ``ema_overwrite_frequency`` updates), ``loss_scale_factor`` (gradients are divided by it;
    ``scale_loss`` multiplies a loss) and ``gradient_accumulation_steps`` (the update applies
    every N calls, with the mean of their gradients).
    """

    elementwise_update = False  # whether _update_step may see several variables concatenated

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_update_step" in vars(cls) and "elementwise_update" not in vars(cls):
            cls.elementwise_update = False  # a new step is not known to be elementwise
        if "__init__" in vars(cls):
            cls.__signature__ = checks.merged_signature(cls, Optimizer.__init__)

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None):
        for value, what in ((clipnorm, "clipnorm"), (clipvalue, "clipvalue"),
                            (global_clipnorm, "global_clipnorm")):
            checks.check_positive(value, what)
        if sum(v is not None for v in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(f"only one of clipnorm, clipvalue and global_clipnorm can be set, "
                             f"got clipnorm={clipnorm}, clipvalue={clipvalue}, "
                             f"global_clipnorm={global_clipnorm}")
        checks.check_common(weight_decay, use_ema, ema_momentum, ema_overwrite_frequency,
                            loss_scale_factor, gradient_accumulation_steps)
        self.name = name or type(self).__name__.lower()
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.use_ema, self.ema_momentum = bool(use_ema), ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.global_norm = None  # the last step's gradient norm before global_clipnorm clipped it
        # Keras's raw call counter (``_iterations``): ``iterations`` divides it by the
        # accumulation steps, schedules read it as it is.
        self._iterations = Variable(wrap(np.zeros((), np.int64)), trainable=False,
                                    name=f"{self.name}/iteration")
        self._learning_rate = None
        self.learning_rate = learning_rate
        self._slot_names = ()  # the algorithm's slots, set by the subclass
        self._slots = {}  # variable -> tuple of slot variables, in the order of get_slot_names()
        self._plans = {}  # ids of the variables of one call -> its layout.Plan
        self._scratch_buffers = {}  # (array type, dtype) -> one buffer
        self._scratch_views = {}  # (array type, dtype, shape, count) -> views of that buffer
        self._decay_excluded = (set(), None)
        self._moments = None  # during an update step: sparse.Moments of a gradient's repeats

    @property
    def iterations(self):
        """The number of updates applied: the calls of ``apply_gradients``, divided by
        ``gradient_accumulation_steps`` when accumulating (as Keras counts)."""
        if self.gradient_accumulation_steps:
            return wrap(np.array(int(self._iterations) // self.gradient_accumulation_steps))
        return self._iterations

    # --- the learning rate ----------------------------------------------------------------------
    @property
    def learning_rate(self):
        """The rate the next call uses: the float, the schedule at the number of calls so far,
        or the callable's value."""
        rate = self._learning_rate
        if rate.__class__ is float:  # the common case first: this is read every step
            return rate
        if isinstance(rate, LearningRateSchedule):
            return float(rate(int(self._iterations)))
        return float(rate()) if callable(rate) else rate

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, LearningRateSchedule) or callable(value):
            self._learning_rate = value
            return
        if isinstance(self._learning_rate, LearningRateSchedule):
            raise TypeError(f"optimizer '{self.name}' was created with a learning-rate schedule, "
                            f"so its learning rate cannot be set to a number")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                or not value >= 0:
            raise ValueError(f"learning_rate must be a non-negative number, a schedule or a "
                             f"callable, got {value!r}")
        self._learning_rate = float(value)

    # --- slots ----------------------------------------------------------------------------------
    def get_slot_names(self):
        """The names of the per-variable slots this optimizer keeps: the algorithm's (e.g.
        momentum, velocity), then ``average`` with ``use_ema`` and ``gradient_accumulator``
        with ``gradient_accumulation_steps``."""
        return list(self._all_slot_names())

    def _all_slot_names(self):
        return (self._slot_names + ((AVERAGE,) if self.use_ema else ())
                + ((ACCUMULATOR,) if self.gradient_accumulation_steps else ()))

    def _slot_initial_value(self, slot_name):
        return 0.0

    def build(self, var_list):
        """Create the slots of the variables that have none yet, on each variable's device, and
        move those of a variable moved since (``Layer.to_device``) after it. ``apply_gradients``
        does this by itself; a restore calls it before writing saved slots."""
        names = self._all_slot_names()
        for variable in var_list:
            if not isinstance(variable, Variable):
                raise TypeError(f"optimizer '{self.name}' can only keep slots for fw.Variable "
                                f"objects, got {type(variable).__name__}")
            slots = self._slots.get(variable)
            if slots is None:
                xp = backend.array_module(variable._value)
                self._slots[variable] = tuple(
                    Variable(wrap(xp.full(variable.shape, self._slot_initial_value(slot),
                                          dtype=variable.dtype)),
                             trainable=False, name=f"{self.name}/{variable.name}/{slot}")
                    for slot in names)
            elif slots and backend.is_device_array(slots[0]._value) \
                    != backend.is_device_array(variable._value):
                for slot in slots:
                    slot.to_device(variable.device)

    def get_slot(self, var, slot_name):
        """The slot variable ``slot_name`` kept for ``var``."""
        names = self._all_slot_names()
        if slot_name not in names:
            raise ValueError(f"optimizer '{self.name}' has no slot '{slot_name}'; its slots "
                             f"are {list(names)}")
        if var not in self._slots:
            raise ValueError(f"optimizer '{self.name}' has no slots for variable "
                             f"'{getattr(var, 'name', var)}' yet: it has not updated it")
        return self._slots[var][names.index(slot_name)]

    @property
    def variables(self):
        """All of the optimizer's state: the call counter, then every slot variable."""
        return [self._iterations] + [slot for slots in self._slots.values() for slot in slots]

    def _scratch(self, like, count):
        """``count`` arrays shaped like ``like`` for temporary values: views of one buffer per
        array type (device) and dtype, cached per shape since a step asks for the same ones."""
        key = (like.__class__, like.dtype, like.shape, count)
        views = self._scratch_views.get(key)
        if views is None:
            need = like.size * count
            buffer = self._scratch_buffers.get(key[:2])
            if buffer is None or buffer.size < need:
                buffer = backend.array_module(like).empty(need, dtype=like.dtype)
                self._scratch_buffers[key[:2]] = buffer
                self._scratch_views.clear()  # views of a smaller buffer: let it go
            views = self._scratch_views[key] = tuple(
                buffer[i * like.size:(i + 1) * like.size].reshape(like.shape)
                for i in range(count))
        return views

    # --- applying gradients ---------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars):
        """Update each variable from its gradient; returns the call counter (Keras's).

        Every pair is checked first: a shape, dtype or device mismatch is a ValueError naming
        the variable, and then nothing has been updated.
        """
        grads, variables = self._checked_pairs(grads_and_vars)
        return self._update(grads, variables)

    def apply(self, grads, trainable_variables):
        """Keras 3's form of ``apply_gradients``: the gradients and the variables as two
        lists of the same length (``optimizer.apply(gradients, model.trainable_variables)``)."""
        grads, trainable_variables = list(grads), list(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(f"apply(): {len(grads)} gradients for {len(trainable_variables)} "
                             f"variables; give one gradient per variable")
        return self.apply_gradients(zip(grads, trainable_variables))

    @replayed  # a traced fw.function runs the update again on each call's gradients
    def _update(self, grads, variables):
        """The step for checked ``variables`` from their gradients' arrays ``grads``."""
        learning_rate = self.learning_rate
        counter = self._iterations
        calls = int(counter._value)
        if holders:  # a tape that read them keeps their values (TensorFlow's gradients after)
            before_update(variables)
        plan = self._plan(variables)
        steps = self.gradient_accumulation_steps
        if steps:  # (the mean the update takes is clipped, dense, as Keras clips it)
            applied, moments = calls // steps, None
            grads = self._accumulated(dense_gradients(self._unscaled, grads, False)[0],
                                      variables, (calls + 1) % steps == 0)
            if grads is not None:
                grads = self._clipped(grads)
        else:  # (IndexedSlices: their values unscaled and clipped, then made dense)
            applied = calls
            grads, moments = dense_gradients(self._clipped if self.loss_scale_factor is None
                                             else self._unscaled_and_clipped, grads)
        if grads is not None:
            self._apply(plan, grads, learning_rate, applied + 1, moments)
        if self.use_ema:
            self._update_averages(plan, applied)
        counter._value[()] = calls + 1
        mark_updated(plan.updated)
        _constrain(variables)
        return counter

    def _apply(self, plan, grads, learning_rate, step, moments=None):
        """One update of the plan's variables by ``grads``; ``step`` counts updates from 1;
        ``moments`` {index: ``sparse.Moments``} for sparse gradients whose ids repeat."""
        for group in plan.groups:
            group.gather(grads)
        if self.weight_decay:
            self._decay_weights(plan.decayed_arrays(self._decays), learning_rate)
        try:
            for group in plan.groups:
                self._moments = moments and group.moments(moments)
                self._update_step(group.gradient, group.value, group.update_slots,
                                  learning_rate, step)
            for index, variable, slots in plan.singles:
                arrays = [grads[index], variable._value] + [slot._value for slot in slots]
                repeated = moments and moments.get(index)
                self._moments = None  # (not the last group's)
                if repeated:  # (cut into blocks alongside)
                    arrays += repeated
                for gradient, value, *slot_values in (
                        blocks(arrays) if self.elementwise_update else (arrays,)):
                    if repeated:
                        self._moments = Moments(*slot_values[-2:])
                        slot_values = slot_values[:-2]
                    self._update_step(gradient, value, slot_values, learning_rate, step)
        finally:
            self._moments = None

    def _squared(self, gradient, out):
        """``gradient ** 2`` into ``out``, as Keras squares a gradient: for a sparse one whose
        ids repeat, each row the sum of its occurrences' squares (``optimizers.sparse``)."""
        if self._moments is None:
            return np.multiply(gradient, gradient, out=out)
        out[...] = self._moments.squares
        return out

    def _magnitude(self, gradient, out):
        """``|gradient|`` into ``out``, as Keras takes it: for a sparse one whose ids repeat,
        each row the sum of its occurrences' absolute values."""
        if self._moments is None:
            return np.abs(gradient, out=out)
        out[...] = self._moments.magnitudes
        return out

    def _fused(self, kernel, gradient, variable, slots, constants):
        """Run the fused GPU kernel ``fw_<kernel>`` (``kernels.update``) when the arrays are on
        the device and it takes them; whether it did (else the NumPy path is the caller's)."""
        if variable.__class__ is np.ndarray or self._moments is not None \
                or not kernels.fits(variable, gradient, *slots):
            return False
        kernels.update(kernel, gradient, variable, slots, constants)
        return True

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        """Update the array ``variable`` in place from ``gradient``; ``slots`` are its slots'
        arrays, ``step`` counts updates from 1. With ``elementwise_update``, the arrays may be
        several variables' concatenated (``optimizers.layout.Group``) or a block of one."""
        raise NotImplementedError(f"{type(self).__name__} must define _update_step")

    def _checked_pairs(self, grads_and_vars):
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError(f"optimizer '{self.name}': apply_gradients() got no (gradient, "
                             f"variable) pairs; is the model built and the variable list "
                             f"non-empty?")
        grads, variables, missing = [], [], []
        for index, pair in enumerate(pairs):
            try:
                grad, variable = pair
            except (TypeError, ValueError):
                raise TypeError(f"apply_gradients() takes (gradient, variable) pairs; item "
                                f"{index} is {pair!r:.80}") from None
            if not isinstance(variable, Variable):
                checks.not_a_variable(variable, grad, index)
            if grad is None:
                missing.append(variable.path)
                continue
            raw, value = grad._value if isinstance(grad, Tensor) else grad, variable._value
            if grad.__class__ is IndexedSlices:  # (checked by its values and its dense shape)
                checks.check_gradient(grad.values._value, grad, variable, grad.shape)
            elif raw.__class__ is not value.__class__ or raw.shape != value.shape \
                    or raw.dtype != value.dtype or value.dtype.kind != "f":
                checks.check_gradient(raw, grad, variable)  # (same array type: same device)
            grads.append(raw)
            variables.append(variable)
        if missing:  # (a variable twice among the others: see _plan)
            checks.check_once([variable for _, variable in pairs])
            why = (" This usually means the loss does not depend on them: a layer not used in "
                   "call(), a value taken out of the tape with .numpy() or float(), a "
                   "non-differentiable op (argmax, a cast to an integer) between them and the "
                   "loss, or gradients taken with respect to the wrong variables.")
            if not grads:
                raise ValueError(f"No gradients provided for any variable: {missing}.{why}")
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the "
                          f"loss; they are left unchanged.{why}", stacklevel=3)
        return grads, variables

    def _plan(self, variables):
        """The ``Plan`` for this sequence of variables: the cached one while it still holds,
        else a new one, made after ``build``."""
        key = tuple(map(id, variables))  # the plan holds the variables: their ids stay theirs
        plan = self._plans.get(key)
        if plan is not None and plan.holds(variables):
            return plan  # (made for this list: no variable appears twice in it)
        if len(set(key)) != len(key):
            checks.check_once(variables)
        self.build(variables)
        plan = Plan(variables, self._slots, self._iterations, len(self._slot_names),
                    grouped=self.elementwise_update)
        ids = set(key)
        for other in [k for k in self._plans if not ids.isdisjoint(k)]:
            del self._plans[other]  # stale (their groups' slots may have moved): free them
        self._plans[key] = plan
        return plan

    def _unscaled_and_clipped(self, grads):
        return self._clipped(self._unscaled(grads))

    def _clipped(self, grads):
        """Keras's clipping: each gradient by its norm, all by their global norm, or by value."""
        if self.clipnorm is not None:
            clip = self.clipnorm
            return [g * clip / max(_norm(g), clip) for g in grads]
        if self.global_clipnorm is not None:
            norm = math.sqrt(sum(_squared_norm(g) for g in grads))
            self.global_norm = norm
            clip = self.global_clipnorm
            scale = clip / max(norm, clip) if math.isfinite(norm) else math.nan
            return [g * scale for g in grads]
        if self.clipvalue is not None:
            return [g.clip(-self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Leave these variables, or those whose names contain one of ``var_names`` (regular
        expressions, e.g. ``["bias"]``), out of the weight decay."""
        pattern = re.compile("|".join(var_names)) if var_names else None
        self._decay_excluded = ({id(v) for v in var_list or ()}, pattern)

    def _decays(self, variable):
        """Whether the weight decay applies to ``variable``."""
        excluded, pattern = self._decay_excluded
        return not (id(variable) in excluded or (pattern and pattern.search(variable.name)))

    def _decay_weights(self, arrays, learning_rate):
        """Keras's decoupled weight decay on each array: ``w -= w * weight_decay * lr``."""
        for value in arrays:
            (decay,) = self._scratch(value, 1)
            np.multiply(value, self.weight_decay, out=decay)
            decay *= value.dtype.type(learning_rate)
            value -= decay

    def minimize(self, loss, var_list, tape=None):
        """One step on ``loss``: a callable computed under a new tape (and scaled by
        ``loss_scale_factor``), or a tensor recorded by ``tape`` (already scaled, if wanted).
        ``var_list`` is a list of variables or a callable returning one."""
        var_list = list(var_list() if callable(var_list) else var_list)
        if callable(loss):
            with fw.GradientTape() as recording:
                recording.watch(var_list)
                loss = self.scale_loss(loss())
            tape = recording
        elif tape is None:
            raise ValueError("minimize(): a loss tensor needs the tape that recorded it "
                             "(tape=...); or pass the loss as a callable")
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    # --- state ----------------------------------------------------------------------------------
    def get_state(self):
        """Everything a resumed run needs, as host values: ``iterations`` (the number of
        calls, from which ``iterations`` proper, the schedule's position and Nadam's momentum
        schedule follow), ``learning_rate`` (None when a schedule or callable drives it) and
        ``slots`` {variable: {name: array}}, the moving averages and accumulators included."""
        rate = self._learning_rate
        names = self._all_slot_names()
        return {"iterations": int(self._iterations),
                "learning_rate": None if callable(rate) else rate,
                "slots": {variable: {name: slot.numpy() for name, slot in zip(names, slots)}
                          for variable, slots in self._slots.items()}}

    def set_state(self, state):
        """Load what ``get_state`` returned (any of its keys), checking all before writing."""
        slots = state.get("slots", {})
        names = self._all_slot_names()
        for variable, arrays in slots.items():
            if set(arrays) != set(names):
                raise ValueError(f"optimizer '{self.name}': the state of '{variable.name}' has "
                                 f"slots {sorted(arrays)}, this optimizer keeps {list(names)}")
            for name, array in arrays.items():
                if tuple(np.shape(array)) != variable.shape:
                    raise ValueError(f"optimizer '{self.name}': slot '{name}' of '{variable.name}'"
                                     f" has shape {np.shape(array)}, the variable {variable.shape}")
        if state.get("learning_rate") is not None:
            self.learning_rate = state["learning_rate"]
        if "iterations" in state:
            self._iterations.assign(int(state["iterations"]))
        self.build(slots)
        for variable, arrays in slots.items():
            for name, array in arrays.items():
                slot = self.get_slot(variable, name)
                slot.assign(backend.to_device(np.asarray(array), slot.device))


Optimizer.__signature__ = checks.merged_signature(Optimizer, Optimizer.__init__)


def _squared_norm(g):
    return float(backend.array_module(g).vdot(g, g))


def _norm(g):
    return math.sqrt(_squared_norm(g))


def _constrain(variables):
    """Keras's last step of an update: each variable with a ``constraint`` takes its value."""
    for variable in variables:
        if variable.constraint is not None:
            variable.assign(variable.constraint(variable))
