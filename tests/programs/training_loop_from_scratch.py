"""The Keras guide "Writing a training loop from scratch" (TensorFlow): a functional model,
SGD, ``SparseCategoricalCrossentropy(from_logits=True)``, train and validation
``SparseCategoricalAccuracy`` metrics reset each epoch, ``tf.function`` train and test steps,
then a layer that adds an activity loss with ``add_loss`` (``sum(model.losses)`` in the step).
MNIST is replaced by 16-feature, 10-class blobs; a few small epochs."""
import numpy as np


def main(tf, epochs=3, init=None):
    keras = tf.keras
    rng = np.random.default_rng(2)
    centers = rng.standard_normal((10, 16)) * 2.0
    labels = rng.integers(0, 10, 320)
    x_all = (centers[labels] + rng.standard_normal((320, 16))).astype("float32")
    x_train, y_train, x_val, y_val = x_all[:256], labels[:256], x_all[256:], labels[256:]

    inputs = keras.Input(shape=(16,), name="digits")
    x1 = keras.layers.Dense(32, activation="relu")(inputs)
    x2 = keras.layers.Dense(32, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    model = keras.Model(inputs=inputs, outputs=outputs)
    if init is not None:
        model.set_weights(init(model.get_weights()))

    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    batch_size = 64
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(batch_size)
    val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(batch_size)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    def steps(model):  # (the guide defines them again for its second model)
        optimizer = keras.optimizers.SGD(learning_rate=1e-2)

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss_value = loss_fn(y, logits)
                loss_value += sum(model.losses)
            grads = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            train_acc_metric.update_state(y, logits)
            return loss_value

        @tf.function
        def test_step(x, y):
            val_logits = model(x, training=False)
            val_acc_metric.update_state(y, val_logits)

        return train_step, test_step

    def run(history):
        train_step, test_step = steps(model)
        for epoch in range(epochs):
            losses = [float(train_step(x_batch, y_batch))
                      for x_batch, y_batch in train_dataset]
            train_acc = float(train_acc_metric.result())
            train_acc_metric.reset_state()
            for x_batch_val, y_batch_val in val_dataset:
                test_step(x_batch_val, y_batch_val)
            val_acc = float(val_acc_metric.result())
            val_acc_metric.reset_state()
            history.append({"losses": losses, "train acc": train_acc, "val acc": val_acc})
        return history

    plain = run([])

    class ActivityRegularizationLayer(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_sum(inputs))
            return inputs

    inputs = keras.Input(shape=(16,), name="digits")
    x = keras.layers.Dense(32, activation="relu")(inputs)
    x = ActivityRegularizationLayer()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    if init is not None:
        model.set_weights(init(model.get_weights()))
    return {"plain": plain, "with activity loss": run([])}
