"""TF's "Custom training: basics" guide: a linear model as a ``tf.Module`` with two
``tf.Variable``s, fitted to noisy data of a line with a hand-written gradient-descent loop
(``assign_sub``), then the same model as a ``tf.keras.Model`` subclass trained by the same loop.
The guide's data are drawn with ``tf.random.normal``; here with NumPy, the same on both sides."""
import numpy as np


def main(tf, epochs=10):
    TRUE_W, TRUE_B, NUM_EXAMPLES = 3.0, 2.0, 201
    rng = np.random.default_rng(0)
    x = tf.constant(np.linspace(-2, 2, NUM_EXAMPLES), dtype=tf.float32)
    noise = tf.constant(rng.standard_normal(NUM_EXAMPLES), dtype=tf.float32)
    y = x * TRUE_W + TRUE_B + noise

    class MyModel(tf.Module):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def __call__(self, x):
            return self.w * x + self.b

    def loss(target_y, predicted_y):
        return tf.reduce_mean(tf.square(target_y - predicted_y))

    def train(model, x, y, learning_rate):
        with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(learning_rate * dw)
        model.b.assign_sub(learning_rate * db)

    def training_loop(model, x, y):
        history = []
        for epoch in range(epochs):
            train(model, x, y, learning_rate=0.1)
            history.append((float(model.w.numpy()), float(model.b.numpy()),
                            float(loss(y, model(x)))))
        return history

    model = MyModel()
    module_history = training_loop(model, x, y)

    class MyModelKeras(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def call(self, x):
            return self.w * x + self.b

    keras_model = MyModelKeras()
    keras_history = training_loop(keras_model, x, y)
    # (not compared: len(keras_model.variables), 0 in Keras 3, which tracks its own variables
    # only, 2 here, where a tf.Variable attribute is tracked as tf.Module tracks it)
    return {"module": module_history, "keras": keras_history,
            "variables": len(model.variables)}
