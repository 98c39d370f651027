"""MAML on sinusoid regression (Finn et al.) as TF2 ports write it: a ``tf.keras.Model``
subclass of three Dense layers, the inner step's "fast weights" ``w - lr_inner * grad`` run
through the same layers' computation (so the outer tape differentiates through the inner
step: second-order MAML), and Adam on the meta-loss. The widely read port assigns the fast
weights to a copy's ``layer.kernel``, which Keras 3 (TF 2.21) refuses (a read-only property),
so the forward pass with given weights is written out, as other ports do. Shrunk: 4 tasks per
epoch."""
import numpy as np


def main(tf, epochs=2, init=None):
    keras = tf.keras
    rng = np.random.default_rng(3)

    def sinusoid_task():
        amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)
        x = rng.uniform(-5, 5, (10, 1)).astype("float32")
        return x, (amplitude * np.sin(x - phase)).astype("float32")

    class SineModel(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden1 = keras.layers.Dense(40, input_shape=(1,))
            self.hidden2 = keras.layers.Dense(40)
            self.out = keras.layers.Dense(1)

        def forward(self, x):
            x = keras.activations.relu(self.hidden1(x))
            x = keras.activations.relu(self.hidden2(x))
            x = self.out(x)
            return x

    def loss_function(pred_y, y):
        # (the original calls keras.losses.mean_squared_error, which tf.keras 3 spells MSE)
        return keras.backend.mean(keras.losses.MSE(y, pred_y))

    def np_to_tensor(list_of_numpy_objs):
        return (tf.convert_to_tensor(obj) for obj in list_of_numpy_objs)

    def compute_loss(model, x, y, loss_fn=loss_function):
        logits = model.forward(x)
        mse = loss_fn(y, logits)
        return mse, logits

    def forward_with(weights, x):
        """The model's computation with the weights given (kernel, bias per layer)."""
        for i in range(0, len(weights) - 2, 2):
            x = keras.activations.relu(tf.matmul(x, weights[i]) + weights[i + 1])
        return tf.matmul(x, weights[-2]) + weights[-1]

    model = SineModel()
    model.forward(tf.zeros((1, 1)))
    if init is not None:
        model.set_weights(init(model.get_weights()))
    optimizer = keras.optimizers.Adam(learning_rate=0.01)
    lr_inner = 0.01
    tasks = [sinusoid_task() for _ in range(4 * epochs)]
    losses = []
    for epoch in range(epochs):
        for x, y in tasks[4 * epoch:4 * epoch + 4]:
            x, y = np_to_tensor((x, y))
            model.forward(x)
            with tf.GradientTape() as test_tape:
                with tf.GradientTape() as train_tape:
                    train_loss, _ = compute_loss(model, x, y)
                gradients = train_tape.gradient(train_loss, model.trainable_variables)
                fast_weights = [tf.subtract(w, tf.multiply(lr_inner, g))
                                for w, g in zip(model.trainable_variables, gradients)]
                test_loss = loss_function(forward_with(fast_weights, x), y)
            gradients = test_tape.gradient(test_loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            losses.append(float(test_loss))
    x, y = tasks[0]
    return {"meta losses": losses, "after": float(compute_loss(model, x, y)[0])}
