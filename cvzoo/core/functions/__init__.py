"""Differentiable functions: ``import cvzoo.core.functions as F``.

One public function per module; each is re-exported here, flat, under its family's
banner and sorted within it. Names and argument orders follow Chainer's.
"""

# --- activation ---
from cvzoo.core.functions.activation.elu import elu
from cvzoo.core.functions.activation.gelu import gelu
from cvzoo.core.functions.activation.hard_sigmoid import hard_sigmoid
from cvzoo.core.functions.activation.hard_swish import hard_swish
from cvzoo.core.functions.activation.leaky_relu import leaky_relu
from cvzoo.core.functions.activation.log_softmax import log_softmax
from cvzoo.core.functions.activation.prelu import prelu
from cvzoo.core.functions.activation.relu import relu
from cvzoo.core.functions.activation.relu6 import relu6
from cvzoo.core.functions.activation.sigmoid import sigmoid
from cvzoo.core.functions.activation.softmax import softmax
from cvzoo.core.functions.activation.swish import swish
from cvzoo.core.functions.activation.tanh import tanh

# --- array ---
from cvzoo.core.functions.array.broadcast import broadcast_to, sum_to
from cvzoo.core.functions.array.cast import cast
from cvzoo.core.functions.array.concat import concat
from cvzoo.core.functions.array.copy import copy
from cvzoo.core.functions.array.expand_dims import expand_dims
from cvzoo.core.functions.array.flatten import flatten
from cvzoo.core.functions.array.get_item import get_item
from cvzoo.core.functions.array.hstack import hstack
from cvzoo.core.functions.array.pad import pad
from cvzoo.core.functions.array.repeat import repeat
from cvzoo.core.functions.array.reshape import reshape
from cvzoo.core.functions.array.rollaxis import rollaxis
from cvzoo.core.functions.array.scatter_add import scatter_add
from cvzoo.core.functions.array.select_item import select_item
from cvzoo.core.functions.array.split_axis import split_axis
from cvzoo.core.functions.array.squeeze import squeeze
from cvzoo.core.functions.array.stack import stack
from cvzoo.core.functions.array.swapaxes import swapaxes
from cvzoo.core.functions.array.tile import tile
from cvzoo.core.functions.array.transpose import transpose
from cvzoo.core.functions.array.vstack import vstack
from cvzoo.core.functions.array.where import where

# --- connection ---
from cvzoo.core.functions.connection.convolution_2d import convolution_2d
from cvzoo.core.functions.connection.deconvolution_2d import deconvolution_2d
from cvzoo.core.functions.connection.depthwise_convolution_2d import depthwise_convolution_2d
from cvzoo.core.functions.connection.dilated_convolution_2d import dilated_convolution_2d
from cvzoo.core.functions.connection.embed_id import embed_id
from cvzoo.core.functions.connection.linear import linear

# --- evaluation ---
from cvzoo.core.functions.evaluation.accuracy import accuracy

# --- loss ---
from cvzoo.core.functions.loss.absolute_error import absolute_error
from cvzoo.core.functions.loss.huber_loss import huber_loss
from cvzoo.core.functions.loss.mean_squared_error import mean_squared_error
from cvzoo.core.functions.loss.sigmoid_cross_entropy import sigmoid_cross_entropy
from cvzoo.core.functions.loss.smooth_l1_loss import smooth_l1_loss
from cvzoo.core.functions.loss.softmax_cross_entropy import softmax_cross_entropy

# --- math ---
from cvzoo.core.functions.math.argmax import argmax
from cvzoo.core.functions.math.argmin import argmin
from cvzoo.core.functions.math.basic_math import absolute, add, div, mul, neg, pow, sub
from cvzoo.core.functions.math.batch_l2_norm_squared import batch_l2_norm_squared
from cvzoo.core.functions.math.clip import clip
from cvzoo.core.functions.math.exponential import exp, log
from cvzoo.core.functions.math.matmul import matmul
from cvzoo.core.functions.math.max import max
from cvzoo.core.functions.math.maximum import maximum
from cvzoo.core.functions.math.mean import mean
from cvzoo.core.functions.math.min import min
from cvzoo.core.functions.math.minimum import minimum
from cvzoo.core.functions.math.sqrt import sqrt
from cvzoo.core.functions.math.square import square
from cvzoo.core.functions.math.squared_difference import squared_difference
from cvzoo.core.functions.math.sum import sum

# --- noise ---
from cvzoo.core.functions.noise.dropout import dropout

# --- normalization ---
from cvzoo.core.functions.normalization.batch_normalization import batch_normalization
from cvzoo.core.functions.normalization.fixed_batch_normalization import (
    fixed_batch_normalization,
)
from cvzoo.core.functions.normalization.group_normalization import group_normalization
from cvzoo.core.functions.normalization.layer_normalization import layer_normalization
from cvzoo.core.functions.normalization.local_response_normalization import (
    local_response_normalization,
)
from cvzoo.core.functions.normalization.normalize import normalize

# --- pooling ---
from cvzoo.core.functions.pooling.average_pooling_2d import average_pooling_2d
from cvzoo.core.functions.pooling.global_average_pooling_2d import global_average_pooling_2d
from cvzoo.core.functions.pooling.max_pooling_2d import max_pooling_2d
from cvzoo.core.functions.pooling.unpooling_2d import unpooling_2d
from cvzoo.core.functions.pooling.upsampling_2d import upsampling_2d

# --- resize ---
from cvzoo.core.functions.resize.resize_images import resize_images
from cvzoo.core.functions.resize.upsample_nearest_2d import upsample_nearest_2d

# --- vision ---
from cvzoo.core.functions.vision.ps_roi_average_pooling_2d import ps_roi_average_pooling_2d
from cvzoo.core.functions.vision.roi_align_2d import roi_align_2d
from cvzoo.core.functions.vision.roi_pooling_2d import roi_pooling_2d

# --- Variable's operators and methods ---
from cvzoo.core.functions import _variable_methods
from cvzoo.core.functions.math import basic_math as _basic_math

_basic_math.install_variable_arithmetics()
_variable_methods.install()
