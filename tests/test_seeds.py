"""The GradientTape snippets of the five seed tutorials, with ``framework as fw`` in place of tf.

Each test keeps the user's code as written (names, keyword arguments, calling ``gradient``
inside the context where the tutorial does) and asserts the numbers the tutorial prints or
asserts. Names a snippet leaves undefined (``variable_a``, ``loss_fn``, ``model``, ``k``) get a
minimal definition. Snippets that need Keras layers use ``layers`` and skip only while it is not
importable; where a layer only supplies an initializer, ``fw.random`` stands in as well.
"""
import warnings

import numpy as np
import pytest

import framework as fw

tf = fw  # the seeds' spelling; every ``tf.`` below runs on the framework


def layers_or_skip(*names):
    layers = pytest.importorskip("layers")
    missing = [n for n in names if not hasattr(layers, n)]
    if missing:
        pytest.skip(f"layers does not provide {', '.join(missing)} yet")
    return layers


def optimizers_or_skip(*names):
    optimizers = pytest.importorskip("optimizers")
    missing = [n for n in names if not hasattr(optimizers, n)]
    if missing:
        pytest.skip(f"optimizers does not provide {', '.join(missing)} yet")
    return optimizers


def assert_scalar(t, expected):
    assert t is not None
    assert t.shape == () and t.dtype == fw.float32
    assert t.numpy() == expected


@pytest.fixture(autouse=True)
def _quiet_in_context_warnings():
    """Several seeds call gradient inside a persistent tape's context, which warns (as in TF)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Calling GradientTape.gradient on a persistent")
        yield


# --- seed 000: the tf.GradientTape API tour (Chinese) ------------------------------------------
def test_seed000_first_derivative():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    dy_dx = tape.gradient(y, x)  # 求微分 tf.Tensor(6.0, shape=(), dtype=float32)
    assert repr(dy_dx) == "Tensor(6.0, shape=(), dtype=float32)"


def test_seed000_nested_tapes():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.GradientTape() as tt:
            tt.watch(x)
            y = x * x
        dy_dx = tt.gradient(y, x)  # tf.Tensor(4.0, shape=(), dtype=float32)
    dy2_dx2 = tape.gradient(dy_dx, x)  # tf.Tensor(2.0, shape=(), dtype=float32)
    assert_scalar(dy_dx, 4.0)
    assert_scalar(dy2_dx2, 2.0)


def test_seed000_persistent():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    dz_dx = tape.gradient(z, x)  # tf.Tensor(108.0, shape=(), dtype=float32)
    dy_dx = tape.gradient(y, x)  # tf.Tensor(6.0, shape=(), dtype=float32)

    del tape  # 删除tape引用
    assert_scalar(dz_dx, 108.0)
    assert_scalar(dy_dx, 6.0)


def test_seed000_watch_accessed_variables_false():
    variable_a, variable_b = tf.Variable(3.0), tf.Variable(2.0)
    with tf.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(variable_a)
        y = variable_a ** 2  # 梯度作用于`variable_a`.
        z = variable_b ** 3  # 由于`variable_b` 没有被watch，所有不会计算梯度
    assert_scalar(tape.gradient(y, variable_a), 6.0)
    assert tape.gradient(z, variable_b) is None


def test_seed000_watching_unbuilt_layer_variables():
    layers = layers_or_skip("Dense")
    inputs = fw.random.normal((4, 16), seed=0)
    a = layers.Dense(32)
    b = layers.Dense(32)

    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a.variables)  # 由于此时尚未调用`a.build`，因此`a.variables`将返
        # 回一个空列表，并且tape将不会监视任何内容。
        result = b(a(inputs))
        grads = tape.gradient(result, a.variables)  # 该计算的结果将是“None”的列表，因为不会监视a的变量
    assert len(a.variables) == 2 and grads == [None, None]


def test_seed000_batch_jacobian():
    with tf.GradientTape() as g:
        x = tf.constant([[1., 2.], [3., 4.]], dtype=tf.float32)
        g.watch(x)
        y = x * x
    batch_jacobian = g.batch_jacobian(y, x)
    # batch_jacobian is [[[2,  0], [0,  4]], [[6,  0], [0,  8]]]
    assert batch_jacobian.shape == (2, 2, 2) and batch_jacobian.dtype == fw.float32
    assert batch_jacobian.numpy().tolist() == [[[2, 0], [0, 4]], [[6, 0], [0, 8]]]


def test_seed000_batch_jacobian_is_stacked_jacobians():
    """``tf.stack([self.jacobian(y[i], x[i]) for i in range(x.shape[0])])``, slices on the tape."""
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([[1., 2.], [3., 4.]])
        g.watch(x)
        xs = [x[i] for i in range(x.shape[0])]
        ys = [x_i * x_i for x_i in xs]
        y = tf.stack(ys)
    stacked = tf.stack([g.jacobian(ys[i], xs[i]) for i in range(x.shape[0])])
    np.testing.assert_array_equal(stacked.numpy(), g.batch_jacobian(y, x).numpy())
    assert stacked.numpy().tolist() == [[[2, 0], [0, 4]], [[6, 0], [0, 8]]]


def test_seed000_jacobian():
    with tf.GradientTape() as g:
        x = tf.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    jacobian = g.jacobian(y, x)
    # jacobian value is [[2., 0.], [0., 4.]]
    assert jacobian.numpy().tolist() == [[2., 0.], [0., 4.]]


def test_seed000_reset_equivalence():
    w = tf.Variable(2.0)

    def loss_fn():
        return w * w

    def other_loss_fn():
        return w * 10.0

    with tf.GradientTape() as t:
        loss = loss_fn()
    with tf.GradientTape() as t:
        loss += other_loss_fn()
    first = t.gradient(loss, w)  # Only differentiates other_loss_fn, not loss_fn

    # The following is equivalent to the above
    with tf.GradientTape() as t:
        loss = loss_fn()
        t.reset()
        loss += other_loss_fn()
    second = t.gradient(loss, w)  # Only differentiates other_loss_fn, not loss_fn
    assert_scalar(first, 10.0)
    assert_scalar(second, 10.0)


def test_seed000_reset_in_control_flow():
    w, k = tf.Variable(3.0), 5.0
    with tf.GradientTape() as t:
        loss = w * w
        if loss > k:
            t.reset()
        loss = loss + w  # only this is still on the tape
    assert_scalar(t.gradient(loss, w), 1.0)


class TinyModel:
    """What the stop_recording snippet needs of ``model``: variables and a forward pass."""

    def __init__(self):
        self.w = tf.Variable([[1.0], [-2.0]], name="w")
        self.b = tf.Variable([0.5], name="b")
        self.variables = [self.w, self.b]

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
Y = np.array([[1.0], [0.0], [0.0]], np.float32)


def compute_loss(model):
    return tf.reduce_mean(tf.square(model(tf.constant(X)) - tf.constant(Y)))


def _expected_grads(w, b):
    r = X @ w + b - Y
    return 2 * X.T @ r / len(X), 2 * r.sum(0) / len(X)


@pytest.mark.parametrize("seed", ["000", "001"])
def test_seed000_001_stop_recording_around_gradient(seed):
    model = TinyModel()
    with tf.GradientTape(persistent=True) as t:
        loss = compute_loss(model)
        with t.stop_recording():
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # not recording: no "less efficient" warning
                # The gradient computation below is not traced, saving memory.
                grads = t.gradient(loss, model.variables)
    ew, eb = _expected_grads(model.w.numpy(), model.b.numpy())
    np.testing.assert_allclose(grads[0].numpy(), ew, rtol=1e-6)
    np.testing.assert_allclose(grads[1].numpy(), eb, rtol=1e-6, atol=1e-6)
    assert t.gradient(grads[0], model.variables) == [None, None]  # nothing was traced


def test_seed000_stop_recording_with_a_layer_model():
    layers = layers_or_skip("Dense")
    model = layers.Dense(1)
    model(tf.constant(X))  # build it

    def compute_loss(model):
        return tf.reduce_mean(tf.square(model(tf.constant(X)) - tf.constant(Y)))

    with tf.GradientTape(persistent=True) as t:
        loss = compute_loss(model)
        with t.stop_recording():
            # The gradient computation below is not traced, saving memory.
            grads = t.gradient(loss, model.variables)
    assert len(grads) == 2 and all(g is not None for g in grads)
    ew, eb = _expected_grads(model.kernel.numpy(), model.bias.numpy())
    np.testing.assert_allclose(grads[0].numpy(), ew, rtol=1e-5)
    np.testing.assert_allclose(grads[1].numpy(), eb, rtol=1e-5)


# --- seed 001: a Chinese blog post on GradientTape ---------------------------------------------
def _seed001_several_targets(initializer):
    w1 = tf.Variable(name='w1', initial_value=initializer(shape=[3]))
    w2 = tf.Variable(name='w2', initial_value=initializer(shape=[3]))
    w3 = tf.Variable(name='w3', initial_value=initializer(shape=[3]))
    w4 = tf.Variable(name='w4', initial_value=initializer(shape=[3]))
    with tf.GradientTape() as g:
        # g.watch(w1)
        # g.watch(w2)
        # g.watch(w3)
        # g.watch(w4)
        z1 = 3 * w1 + 2 * w2 + w3
        z2 = w1 + -1 * w3 + w4
        grads = g.gradient([z1, z2], [w1, w2, w3, w4])
    assert type(grads) is list
    assert len(grads) == 4
    assert [g_.numpy().tolist() for g_ in grads] == [[4., 4., 4.], [2., 2., 2.], [0., 0., 0.],
                                                     [1., 1., 1.]]
    assert all(g_.shape == (3,) and g_.dtype == fw.float32 for g_ in grads)


def test_seed001_several_targets_add_up_with_fw_random():
    fw.random.set_seed(0)
    _seed001_several_targets(lambda shape: fw.random.normal(shape))


def test_seed001_several_targets_add_up_with_glorot_normal():
    layers = layers_or_skip("initializers")
    initializer = layers.initializers.GlorotNormal()
    _seed001_several_targets(initializer)


def test_seed001_persistent_inside_the_context():
    x = tf.Variable(3.)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.pow(x, 4)        # y = x^4
        z = tf.multiply(x, 3)   # z = 3*x
        dy_dx = tape.gradient(y, x)
        dz_dx = tape.gradient(z, x)
        print(dy_dx)
        print(dz_dx)
    del tape
    assert_scalar(dy_dx, 108.0)
    assert_scalar(dz_dx, 3.0)


def test_seed001_second_order():
    x = tf.Variable(1.)
    with tf.GradientTape() as tape1:
        tape1.watch(x)
        with tf.GradientTape() as tape2:
            tape2.watch(x)
            y = tf.pow(x, 4)
            dy_dx = tape2.gradient(y, x)  # y' = 4x^3
            print(dy_dx)
        dy2_dx2 = tape1.gradient(dy_dx, x)  # y'' = 12x^2
        print(dy2_dx2)
    del tape1, tape2
    assert_scalar(dy_dx, 4.0)
    assert_scalar(dy2_dx2, 12.0)


# --- seed 002: the TensorFlow handbook's appendix on tf.GradientTape ---------------------------
def test_seed002_grad_py():
    x = tf.Variable(initial_value=3.)
    with tf.GradientTape() as tape:     # 在 tf.GradientTape() 的上下文内，所有计算步骤都会被记录以用于求导
        y = tf.square(x)
    y_grad = tape.gradient(y, x)        # 计算y关于x的导数
    print(y, y_grad)
    assert_scalar(y, 9.0)
    assert_scalar(y_grad, 6.0)

    X = tf.constant([[1., 2.], [3., 4.]])
    y = tf.constant([[1.], [2.]])
    w = tf.Variable(initial_value=[[1.], [2.]])
    b = tf.Variable(initial_value=1.)
    with tf.GradientTape() as tape:
        L = tf.reduce_sum(tf.square(tf.matmul(X, w) + b - y))
    w_grad, b_grad = tape.gradient(L, [w, b])        # 计算L(w, b)关于w, b的偏导数
    print(L, w_grad, b_grad)
    assert_scalar(L, 125.0)
    assert w_grad.numpy().tolist() == [[70.0], [100.0]]
    assert_scalar(b_grad, 30.0)


def test_seed002_tape_basic_stop_recording():
    x = tf.Variable(initial_value=3.)
    with tf.GradientTape() as tape:
        y = tf.square(x)
        with tape.stop_recording():  # first call: the tape is recording, this works
            y_untracked = tf.square(x)
    y_grad = tape.gradient(y, x)  # the records survive leaving the context
    assert_scalar(y_grad, 6.0)
    assert_scalar(y_untracked, 9.0)
    with pytest.raises(ValueError, match="^Tape is not recording.$"):
        with tape.stop_recording():  # second call, after the context: ValueError
            pass


def test_seed002_tape_watch():
    x = tf.Variable(initial_value=3.)
    c = tf.constant(2.)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.square(x) * c  # the variable is watched automatically, the constant is not
    assert_scalar(tape.gradient(y, x), 12.0)
    assert tape.gradient(y, c) is None
    with tf.GradientTape() as tape:
        tape.watch(c)
        y = tf.square(x) * c
    assert_scalar(tape.gradient(y, c), 9.0)


def test_seed002_high_order_grad():
    x = tf.Variable(initial_value=3.)
    with tf.GradientTape() as tape:
        with tf.GradientTape() as tape2:
            y = tf.square(x)
        y_grad = tape2.gradient(y, x)   # dy/dx = 2x
    y_grad_grad = tape.gradient(y_grad, x)  # d2y/dx2 = 2
    assert_scalar(y_grad, 6.0)
    assert_scalar(y_grad_grad, 2.0)


def test_seed002_tape_persistent():
    x = tf.Variable(initial_value=3.)
    z = tf.Variable(initial_value=2.)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.square(x)
        w = tf.pow(z, 3)
    y_grad = tape.gradient(y, x)  # x^2 at x = 3
    w_grad = tape.gradient(w, z)  # z^3 at z = 2
    del tape
    assert_scalar(y_grad, 6.0)
    assert_scalar(w_grad, 12.0)


def test_seed002_tape_optimization():
    x = tf.Variable(3.)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.square(x)
        y_grad = tape.gradient(y, x)    # 如果后续并不需要对 y_grad 求导，则不建议在上下文环境中求导
        with tape.stop_recording():     # 对于无需记录求导的计算步骤，可以暂停记录器后计算
            y_grad_not_recorded = tape.gradient(y, x)
    d2y_dx2 = tape.gradient(y_grad, x)  # 如果后续需要对 y_grad 求导，则 y_grad 必须写在上下文中
    assert_scalar(y_grad, 6.0)
    assert_scalar(y_grad_not_recorded, 6.0)
    assert_scalar(d2y_dx2, 2.0)
    assert tape.gradient(y_grad_not_recorded, x) is None


def test_seed002_partial_update_of_an_mlp():
    layers = layers_or_skip("Layer", "Dense", "Flatten")
    optimizers = optimizers_or_skip("Adam")
    if not hasattr(fw, "losses"):
        pytest.skip("fw.losses is not there yet")

    class MLP(layers.Layer):  # the handbook's zh/model/mnist/mlp.py
        def __init__(self):
            super().__init__()
            self.flatten = layers.Flatten()
            self.dense1 = layers.Dense(units=100, activation="relu")
            self.dense2 = layers.Dense(units=10)

        def call(self, inputs, training=None):
            x = self.flatten(inputs)
            x = self.dense1(x)
            x = self.dense2(x)
            return tf.nn.softmax(x)

    fw.random.set_seed(1)
    num_batches = 3
    learning_rate_1 = 0.001
    learning_rate_2 = 0.01

    model = MLP()
    # 声明两个优化器，设定不同的学习率，分别用于更新MLP模型的第一层和第二层
    optimizer_1 = optimizers.Adam(learning_rate=learning_rate_1)
    optimizer_2 = optimizers.Adam(learning_rate=learning_rate_2)
    for batch_index in range(num_batches):
        X = fw.random.uniform((50, 28, 28, 1))
        y = fw.random.uniform((50,), minval=0, maxval=10, dtype=fw.int32)
        with tf.GradientTape(persistent=True) as tape:  # 声明一个持久的GradientTape，允许我们多次调用tape.gradient方法
            y_pred = model(X)
            loss = tf.losses.sparse_categorical_crossentropy(y_true=y, y_pred=y_pred)
            loss = tf.reduce_mean(loss)
            print("batch %d: loss %f" % (batch_index, loss.numpy()))
        before = [v.numpy() for v in model.dense1.variables + model.dense2.variables]
        grads = tape.gradient(loss, model.dense1.variables)    # 单独求第一层参数的梯度
        optimizer_1.apply_gradients(grads_and_vars=zip(grads, model.dense1.variables)) # 单独对第一层参数更新，学习率0.001
        middle = [v.numpy() for v in model.dense1.variables + model.dense2.variables]
        grads = tape.gradient(loss, model.dense2.variables)    # 单独求第二层参数的梯度
        optimizer_1.apply_gradients(grads_and_vars=zip(grads, model.dense2.variables)) # 单独对第二层参数更新，学习率0.01
        after = [v.numpy() for v in model.dense1.variables + model.dense2.variables]
        assert [np.array_equal(b, m) for b, m in zip(before, middle)] == [False, False, True, True]
        assert [np.array_equal(m, a) for m, a in zip(middle, after)] == [True, True, False, False]
        assert np.isfinite(float(loss))
    assert optimizer_2.learning_rate == learning_rate_2


# --- seed 003: a Jupyter notebook on GradientTape ----------------------------------------------
def test_seed003_scalar_gradients():
    #------------------一元梯度----------------------
    print("1D derivation")
    x = tf.constant(value = 3.0)   #微分器里面必须是浮点数！！！
    with tf.GradientTape(persistent=True,watch_accessed_variables = True) as tape:
        #persistent表示可以反复使用。
        tape.watch(x)  #watch确定记录的变量

        #定义function
        y1=x*2
        y2=x*x+2
        y3=x*x+2*x

        #求导
        dy1_dx = tape.gradient(target=y1,sources=x)#自变量是x，函数是y
        dy2_dx = tape.gradient(target=y2,sources=x)#自变量是x，函数是y
        dy3_dx = tape.gradient(target=y3,sources=x)#自变量是x，函数是y

        #输出
        print("dy1_dx:",dy1_dx)
        print("dy2_dx:",dy2_dx)
        print("dy3_dx:",dy3_dx)
    assert_scalar(dy1_dx, 2.0)
    assert_scalar(dy2_dx, 6.0)
    assert_scalar(dy3_dx, 8.0)


def test_seed003_two_variables_warns_inside_persistent_context():
    print("2D derivation")
    x = tf.constant(value=3.0)
    y = tf.constant(value=2.0)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x,y])

            #构造函数
            z=x*x*y+x*y

            #求导
            dz_dx=tape.gradient(sources=x,target=z)
            dz_dx_dy = tape.gradient(sources=[x,y],target=z)

            print(dz_dx)
            print(dz_dx_dy)
    assert_scalar(dz_dx, 14.0)
    assert isinstance(dz_dx_dy, list)
    assert [t.numpy() for t in dz_dx_dy] == [14.0, 12.0]
    assert sum("less efficient" in str(w.message) for w in caught) == 2


def test_seed003_matrix_function():
    x = tf.ones((2,2))

    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x)#reduce_sum是按行列，或者整个矩阵中每个元素都加起来的和
        z = tf.multiply(y,y)

    #查看一个tape里面记录的内容。
    dz_dx = t.gradient(z,x)

    #看看对不对。
    for i in [0,1]:
        for j in [0,1]:
            assert dz_dx[i][j].numpy() == 8


def test_seed003_intermediate_tensor():
    x = tf.ones((2,2))
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x)
        z = tf.multiply(y,y)
    dz_dy = t.gradient(z, y)
    print(dz_dy.numpy())
    assert dz_dy.numpy() == 8.0
    with pytest.raises(RuntimeError):  # the notebook's tape is not persistent
        t.gradient(z, x)


def test_seed003_persistent():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x*x
        z = y*y

    dz_dx = t.gradient(z,x)
    dy_dx = t.gradient(y,x)

    #释放内存，用完了就销毁tape。
    del t
    assert_scalar(dz_dx, 108.0)
    assert_scalar(dy_dx, 6.0)


def test_seed003_control_flow():
    def f(x, y):
        output = 1.0
        for i in range(y):
            if i > 1 and i < 5:
                output = tf.multiply(output, x)
        return output

    def grad(x, y):
        with tf.GradientTape() as t:
            t.watch(x)
            out = f(x, y)    # 可以看到f(x,y)的值并不是一个固定的函数。
        return t.gradient(out, x)

    x = tf.convert_to_tensor(2.0)

    #检验一下答案，如果有问题就产生error。

    assert grad(x, 6).numpy() == 12.0
    assert grad(x, 5).numpy() == 12.0
    assert grad(x, 4).numpy() == 4.0
    assert grad(x, 6).dtype == fw.float32


def test_seed003_higher_order():
    x = tf.Variable(1.0)

    with tf.GradientTape() as t:
        with tf.GradientTape() as t2:
            y = x*x*x

        dy_dx = t2.gradient(y,x)
    d2y_dx2 = t.gradient(dy_dx,x)

    assert dy_dx.numpy() == 3.0
    assert d2y_dx2.numpy() == 6.0

    print(dy_dx.numpy(),d2y_dx2.numpy())


# --- seed 004: a Colab notebook on tf.GradientTape (Traditional Chinese) -----------------------
def test_seed004_first_derivative():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    dy_dx = g.gradient(y, x)

    print(dy_dx)
    assert str(dy_dx) == "Tensor(6.0, shape=(), dtype=float32)"


def test_seed004_nested():
    x = tf.constant(5.0)
    with tf.GradientTape() as g:
        g.watch(x)
        with tf.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)  # dy_dx = 2 * x
    d2y_dx2 = g.gradient(dy_dx, x)  # d2y_dx2 = 2
    print(dy_dx)
    print(d2y_dx2)
    assert_scalar(dy_dx, 10.0)
    assert_scalar(d2y_dx2, 2.0)


def test_seed004_watch_accessed_variables_false():
    x = tf.Variable(2.0)
    w = tf.Variable(5.0)
    with tf.GradientTape(
        watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x ** 2  # Gradients will be available for `x`.
        z = w ** 3  # No gradients will be available as `w` isn't being watched.
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    # No gradients will be available as `w` isn't being watched.
    dz_dy = tape.gradient(z, w)
    print(dz_dy)
    assert_scalar(dy_dx, 4.0)
    assert dz_dy is None


def test_seed004_batch_jacobian():
    with tf.GradientTape() as g:
        x = tf.constant([[1., 2.], [3., 4.]], dtype=tf.float32)
        g.watch(x)
        y = x * x
    batch_jacobian = g.batch_jacobian(y, x)
    # batch_jacobian is [[[2,  0], [0,  4]], [[6,  0], [0,  8]]]
    assert batch_jacobian.shape == (2, 2, 2) and batch_jacobian.dtype == fw.float32
    np.testing.assert_array_equal(batch_jacobian.numpy(),
                                  np.array([[[2., 0.], [0., 4.]], [[6., 0.], [0., 8.]]],
                                           np.float32))


def test_seed004_reset():
    k = 0.5
    x = tf.Variable(1.0)
    with tf.GradientTape() as t:
        loss = x * 3.0
        if loss > k:
            t.reset()
    assert t.gradient(loss, x) is None  # the notebook's NameError aside: reset forgot it all


def test_seed004_stop_recording():
    x = tf.constant(4.0)

    with tf.GradientTape() as tape:
        with tape.stop_recording():
            y = x ** 2
    dy_dx = tape.gradient(y, x)
    print(dy_dx)
    assert dy_dx is None
