"""How ``apply_gradients`` lays out an optimizer's variables for its ``_update_step``.

Small host variables of one dtype are updated together, as flat arrays the optimizer owns
(``Group``); a big variable a block at a time (``blocks``); the rest, device arrays among them,
one by one. ``Plan`` is that layout for one sequence of variables, kept while it holds.
"""
import math
from itertools import compress
from operator import attrgetter, is_

import numpy as np

from .sparse import Moments

# Which variables are updated in a group: grouping pays while the dozen NumPy calls it saves
# outweigh its gather and scatter copies, which grow with the variable, and a group too big for
# the caches loses again (measured with Adam on float32: the figures are in the README).
GROUPED_VARIABLE_BYTES = 32 * 1024  # the largest variable updated in a group (8,192 float32)
GROUP_BYTES = 256 * 1024  # the most one group's flat array holds (65,536 float32)
# A big variable is updated a block at a time, so that the dozen passes of an update run over
# blocks of its arrays held in the cache rather than over whole arrays from memory (the block
# size is the best of those measured: the figures are in the README).
BLOCK_BYTES = 1024 * 1024
_value_of = attrgetter("_value")


class Plan:
    """How ``apply_gradients`` updates one sequence of variables: ``groups`` of small host
    variables, and ``singles`` (index, variable, slots) left to the per-variable path: big
    variables, a dtype alone, and device arrays, whose update is one fused kernel launch
    already (gathering and scattering would only add launches). ``updated``: every variable
    and slot a step writes, and the optimizer's ``iterations``, for one version bump.

    It holds while every variable keeps the array it had once the plan was made (so its
    dtype, shape and device: ``to_device`` replaces the array, and so does a plan for another
    set of variables that takes one into its own group), and every grouped slot likewise:
    one identity check per variable and per grouped slot.
    """

    __slots__ = ("groups", "singles", "slot_values", "slots", "updated", "values")

    def __init__(self, variables, slots_of, iterations, update_slots, grouped=True):
        """``update_slots``: how many of each variable's slots its update step takes (the
        first ones; the others are the optimizer's own: averages, accumulators);
        ``grouped``: whether the update step is elementwise, so that groups may be made."""
        open_groups, chunks = {}, []  # dtype -> [indices, bytes] of the group being filled
        for index, variable in enumerate(variables):
            value = variable._value
            if not grouped or value.__class__ is not np.ndarray \
                    or value.nbytes > GROUPED_VARIABLE_BYTES:
                continue
            chunk = open_groups.get(value.dtype)
            if chunk is None or chunk[1] + value.nbytes > GROUP_BYTES:
                chunk = open_groups[value.dtype] = [[], 0]
                chunks.append(chunk)
            chunk[0].append(index)
            chunk[1] += value.nbytes
        self.groups = [Group([variables[index] for index in indices], indices, slots_of,
                             update_slots)
                       for indices, _ in chunks if len(indices) > 1]
        grouped = {index for group in self.groups for index in group.indices}
        self.singles = [(index, variable, slots_of[variable][:update_slots])
                        for index, variable in enumerate(variables) if index not in grouped]
        self.values = list(map(_value_of, variables))  # grouped ones: views of their group's
        self.updated = list(variables) + [slot for variable in variables
                                          for slot in slots_of[variable]] + [iterations]
        self.slots = [slot for group in self.groups for slot in group.slot_variables]
        self.slot_values = list(map(_value_of, self.slots))

    def holds(self, variables):
        """Whether this plan still fits ``variables`` (the ones it was made for)."""
        return all(map(is_, map(_value_of, variables), self.values)) \
            and all(map(is_, map(_value_of, self.slots), self.slot_values))

    def decayed_arrays(self, decays):
        """The arrays the weight decay applies to, ``decays`` saying which variables: a group's
        whole flat value when all of its variables decay, else theirs within it."""
        arrays = []
        for group in self.groups:
            flags = list(map(decays, group.variables))
            arrays += [group.value] if all(flags) else [
                variable._value for variable in compress(group.variables, flags)]
        arrays += [variable._value for _, variable, _ in self.singles if decays(variable)]
        return arrays

    def columns(self, column, slots_of):
        """``(value, slot)`` array pairs covering every variable and its slot number
        ``column``: a group's flat arrays, a single variable's own."""
        return [(group.value, group.slots[column]) for group in self.groups] + [
            (variable._value, slots_of[variable][column]._value)
            for _, variable, _ in self.singles]


class Group:
    """Small host variables of one dtype, updated by one ``_update_step`` on flat arrays.

    The group owns flat buffers for the variables' values and for each slot, and each of
    those variables' (and slots') arrays becomes a view of its part, its values copied in
    once: the update writes the variables themselves, and their slots, with no copying back,
    while ``get_slot``, the state, checkpoints and ``assign`` see the same arrays as ever.
    Each step copies just the gradients into one more flat buffer. Elementwise ops on the
    concatenation give each element exactly what they give it in its own array, so the
    results are bit for bit those of the per-variable path.
    """

    __slots__ = ("gradient", "gradient_views", "indices", "slot_variables", "slots",
                 "update_slots", "value", "variables")

    def __init__(self, variables, indices, slots_of, update_slots):
        self.variables, self.indices = variables, indices
        shapes = [variable._value.shape for variable in variables]
        dtype = variables[0]._value.dtype
        size = sum(variable._value.size for variable in variables)
        self.gradient = np.empty(size, dtype)
        self.gradient_views = _views(self.gradient, shapes)
        self.value = _take_into(np.empty(size, dtype), variables, shapes)
        self.slots, self.slot_variables = [], []
        for column in range(len(slots_of[variables[0]])):
            slots = [slots_of[variable][column] for variable in variables]
            self.slots.append(_take_into(np.empty(size, dtype), slots, shapes))
            self.slot_variables += slots
        self.update_slots = self.slots[:update_slots]

    def gather(self, grads):
        """Copy this step's gradients (``grads``: the call's, by index) into the flat buffer,
        by slice assignment: NumPy's cheapest copy for arrays this small."""
        for index, view in zip(self.indices, self.gradient_views):
            view[...] = grads[index]


    def moments(self, moments):
        """The ``sparse.Moments`` of this step's gradients as flat arrays (``moments``: those
        of the call's sparse gradients whose ids repeat, by index), the other variables'
        taken from their gradients; None if none of this group's gradients repeat ids."""
        if moments.keys().isdisjoint(self.indices):
            return None
        squares, magnitudes = self.gradient * self.gradient, abs(self.gradient)
        start = 0
        for index, view in zip(self.indices, self.gradient_views):
            repeated = moments.get(index)
            if repeated is not None:
                stop = start + view.size
                squares[start:stop] = repeated.squares.reshape(-1)
                magnitudes[start:stop] = repeated.magnitudes.reshape(-1)
            start += view.size
        return Moments(squares, magnitudes)


def blocks(arrays):
    """``arrays`` (a variable's gradient, value and slots) cut into consecutive blocks of
    ``BLOCK_BYTES``, each a list of flat views; the arrays whole when they are small, not on
    the host, or not all C-contiguous (a reshape would copy, and the update be lost)."""
    first = arrays[0]
    if first.nbytes < 2 * BLOCK_BYTES or not all(
            a.__class__ is np.ndarray and a.flags.c_contiguous for a in arrays):
        return (arrays,)
    flat = [a.reshape(-1) for a in arrays]
    length = BLOCK_BYTES // first.itemsize
    return ([a[start:start + length] for a in flat] for start in range(0, first.size, length))


def _views(flat, shapes):
    """``flat`` cut into consecutive views of the given shapes."""
    views, start = [], 0
    for shape in shapes:
        size = math.prod(shape)
        views.append(flat[start:start + size].reshape(shape))
        start += size
    return views


def _take_into(flat, variables, shapes):
    """Make each variable's array a view of its part of ``flat``, its values copied in."""
    for variable, view in zip(variables, _views(flat, shapes)):
        view[...] = variable._value
        variable._value = view
    return flat
