"""The "PINN solver" for Burgers' equation (Raissi et al.; the widely copied TF2 notebook by
J. Blechschmidt): a tanh network u(t, x), the PDE residual u_t + u u_x - nu u_xx from a
persistent tape's first and second derivatives, inside ``tf.function``, trained with Adam on a
piecewise-constant schedule. Shrunk: 3 hidden layers of 8, 64 collocation points, a few steps."""
import numpy as np


def main(tf, steps=12, init=None, seed=0):
    DTYPE = "float32"
    tf.keras.backend.set_floatx(DTYPE)
    pi = tf.constant(np.pi, dtype=DTYPE)
    viscosity = .01 / pi

    def fun_u_0(x):
        return -tf.sin(pi * x)

    def fun_u_b(t, x):
        n = x.shape[0]
        return tf.zeros((n, 1), dtype=DTYPE)

    def fun_r(t, x, u, u_t, u_x, u_xx):
        return u_t + u * u_x - viscosity * u_xx

    N_0, N_b, N_r = 16, 16, 64
    tmin, tmax, xmin, xmax = 0., 1., -1., 1.
    lb = tf.constant([tmin, xmin], dtype=DTYPE)
    ub = tf.constant([tmax, xmax], dtype=DTYPE)
    rng = np.random.default_rng(seed)  # (the notebook draws these with tf.random.uniform)
    t_0 = tf.ones((N_0, 1), dtype=DTYPE) * lb[0]
    x_0 = tf.constant(rng.uniform(xmin, xmax, (N_0, 1)), dtype=DTYPE)
    X_0 = tf.concat([t_0, x_0], axis=1)
    u_0 = fun_u_0(x_0)
    t_b = tf.constant(rng.uniform(tmin, tmax, (N_b, 1)), dtype=DTYPE)
    x_b = lb[1] + (ub[1] - lb[1]) * tf.constant(rng.integers(0, 2, (N_b, 1)), dtype=DTYPE)
    X_b = tf.concat([t_b, x_b], axis=1)
    u_b = fun_u_b(t_b, x_b)
    t_r = tf.constant(rng.uniform(tmin, tmax, (N_r, 1)), dtype=DTYPE)
    x_r = tf.constant(rng.uniform(xmin, xmax, (N_r, 1)), dtype=DTYPE)
    X_r = tf.concat([t_r, x_r], axis=1)
    X_data = [X_0, X_b]
    u_data = [u_0, u_b]

    def init_model(num_hidden_layers=3, num_neurons_per_layer=8):
        model = tf.keras.Sequential()
        model.add(tf.keras.Input((2,)))
        scaling_layer = tf.keras.layers.Lambda(lambda x: 2.0 * (x - lb) / (ub - lb) - 1.0)
        model.add(scaling_layer)
        for _ in range(num_hidden_layers):
            model.add(tf.keras.layers.Dense(num_neurons_per_layer,
                                            activation=tf.keras.activations.get("tanh"),
                                            kernel_initializer="glorot_normal"))
        model.add(tf.keras.layers.Dense(1))
        return model

    def get_r(model, X_r):
        with tf.GradientTape(persistent=True) as tape:
            t, x = X_r[:, 0:1], X_r[:, 1:2]
            tape.watch(t)
            tape.watch(x)
            u = model(tf.stack([t[:, 0], x[:, 0]], axis=1))
            u_x = tape.gradient(u, x)
        u_t = tape.gradient(u, t)
        u_xx = tape.gradient(u_x, x)
        del tape
        return fun_r(t, x, u, u_t, u_x, u_xx)

    def compute_loss(model, X_r, X_data, u_data):
        r = get_r(model, X_r)
        phi_r = tf.reduce_mean(tf.square(r))
        loss = phi_r
        for i in range(len(X_data)):
            u_pred = model(X_data[i])
            loss += tf.reduce_mean(tf.square(u_data[i] - u_pred))
        return loss

    def get_grad(model, X_r, X_data, u_data):
        with tf.GradientTape(persistent=True) as tape:
            # (the notebook's tape.watch(model.trainable_variables): Keras 3's variables are
            # watched anyway, and TF 2.21 refuses to watch them explicitly)
            loss = compute_loss(model, X_r, X_data, u_data)
        g = tape.gradient(loss, model.trainable_variables)
        del tape
        return loss, g

    model = init_model()
    if init is not None:
        model.set_weights(init(model.get_weights()))
    lr = tf.keras.optimizers.schedules.PiecewiseConstantDecay([5, 9], [1e-2, 5e-3, 1e-3])
    optim = tf.keras.optimizers.Adam(learning_rate=lr)

    @tf.function
    def train_step():
        loss, grad_theta = get_grad(model, X_r, X_data, u_data)
        optim.apply_gradients(zip(grad_theta, model.trainable_variables))
        return loss

    hist = [float(train_step().numpy()) for _ in range(steps)]
    u_pred = model(tf.constant([[0.5, 0.25], [0.9, -0.5]], dtype=DTYPE))
    return {"losses": hist, "u": u_pred.numpy().ravel().tolist()}
