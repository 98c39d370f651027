"""Keras-style layers on the framework: ``from layers import Dense, Sequential, MLP``.

``base`` holds ``Layer`` (lazy build, tracking through ``fw.Module``, names, losses) and
``model`` the ``Model`` class; ``core`` the Dense, Flatten and Dropout layers;
``convolutional`` the convolutions and pools; ``activation_layers``, ``normalization`` and
``embedding`` the other layer types; ``recurrent`` (with its cells in ``rnn_cells``) the RNNs
and ``wrappers`` Bidirectional, TimeDistributed and Masking;
``reshaping`` Permute, RepeatVector, padding, cropping and up-sampling; ``merging`` the
layers that merge branches; ``regularization`` the noise layers beside Dropout;
``preprocessing`` and ``lookup`` the layers that ``adapt`` to data (Normalization,
Discretization, CategoryEncoding, the lookups); ``augmentation`` resizing, cropping and the
random image augmentations; ``containers`` Sequential and MLP; ``functional`` ``Input`` and ``Model(inputs, outputs)``;
``initializers``, ``activations`` and ``regularizers`` the things layers are configured with,
by Keras's names.
"""
from . import activations, constraints, initializers, regularizers
from .augmentation import (CenterCrop, RandomContrast, RandomFlip, RandomRotation,
                           RandomTranslation, RandomZoom, Resizing)
from .attention import AdditiveAttention, Attention, MultiHeadAttention
from .activation_layers import ELU, Activation, LeakyReLU, PReLU, ReLU, Softmax
from .base import LAYERS, Layer
from .containers import MLP, Sequential
from .convolutional import (AveragePooling1D, AveragePooling2D, Conv1D, Conv1DTranspose, Conv2D,
                            Conv2DTranspose, DepthwiseConv2D, GlobalAveragePooling1D,
                            GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D,
                            MaxPooling1D, MaxPooling2D, SeparableConv2D)
from .core import Dense, Dropout, Flatten, Identity, Reshape, Rescaling
from .embedding import Embedding
from .functional import Input, InputLayer
from .lambda_layer import Lambda
from .merging import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add,
                      average, concatenate, dot, maximum, minimum, multiply, subtract)
from .lookup import IntegerLookup, StringLookup
from .model import Model
from .normalization import (BatchNormalization, GroupNormalization, LayerNormalization,
                            UnitNormalization)
from .preprocessing import CategoryEncoding, Discretization, Normalization
from .recurrent import GRU, LSTM, RNN, SimpleRNN
from .rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells
from .regularization import (ActivityRegularization, GaussianDropout, GaussianNoise,
                             SpatialDropout1D, SpatialDropout2D)
from .reshaping import (Cropping1D, Cropping2D, Permute, RepeatVector, UpSampling1D, UpSampling2D,
                        ZeroPadding1D, ZeroPadding2D)
from .wrappers import Bidirectional, Masking, TimeDistributed
from .transformer import TransformerEncoder

__all__ = ["ELU", "LAYERS", "MLP", "Activation", "Add", "BatchNormalization", "Concatenate", "Dense", "Dropout", "Embedding",
           "Flatten", "Input", "InputLayer", "Lambda", "Layer", "LayerNormalization", "LeakyReLU", "Model",
           "ReLU", "Sequential", "Softmax", "activations", "constraints", "initializers", "regularizers",
           "AveragePooling1D", "AveragePooling2D", "Conv1D", "Conv2D", "Conv2DTranspose",
           "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
           "GlobalMaxPooling2D", "MaxPooling1D", "MaxPooling2D", "Reshape",
           "GRU", "LSTM", "RNN", "SimpleRNN", "GRUCell", "LSTMCell", "SimpleRNNCell",
           "StackedRNNCells", "Bidirectional", "Masking", "TimeDistributed",
           "AdditiveAttention", "Attention", "MultiHeadAttention", "TransformerEncoder",
           "Identity", "Rescaling", "Average", "Dot", "Maximum", "Minimum", "Multiply",
           "Subtract", "add", "average", "concatenate", "dot", "maximum", "minimum", "multiply",
           "subtract", "UnitNormalization", "ActivityRegularization", "GaussianDropout",
           "GaussianNoise", "SpatialDropout1D", "SpatialDropout2D", "Cropping1D", "Cropping2D",
           "Permute", "RepeatVector", "UpSampling1D", "UpSampling2D", "ZeroPadding1D",
           "ZeroPadding2D", "DepthwiseConv2D", "SeparableConv2D",
           "Conv1DTranspose", "GroupNormalization", "PReLU", "CategoryEncoding",
           "Discretization", "IntegerLookup", "Normalization", "CenterCrop", "RandomContrast",
           "RandomFlip", "Resizing", "RandomRotation", "RandomTranslation", "RandomZoom",
           "StringLookup"]
