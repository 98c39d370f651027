"""Keras's guide "Writing your own callbacks" (https://keras.io/guides/writing_your_own_callbacks/):
a callback recording the logs it is given at each epoch and batch end, the guide's
``EarlyStoppingAtMinLoss`` (stops when the loss stops falling and restores the best weights)
and its ``CustomLearningRateScheduler`` (sets ``self.model.optimizer.learning_rate`` from a
schedule at each epoch begin), with a one-Dense regression model compiled with SGD, "mse" and
"mean_absolute_error". Shrunk: 32 random rows of 4 features instead of MNIST's 784, 6 epochs;
the initial weights come from ``init``."""
import numpy as np


def main(tf, init=None, epochs=6):
    keras = tf.keras
    rng = np.random.default_rng(2)
    x = rng.random((32, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], "float32") + 0.1).astype("float32")

    def get_model():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        if init is not None:
            model.set_weights(init(model.get_weights()))
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mean_squared_error",
                      metrics=["mean_absolute_error"])
        return model

    class LossAndErrorPrintingCallback(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seen = []

        def on_train_batch_end(self, batch, logs=None):
            self.seen.append(("batch", batch, float(logs["loss"])))

        def on_epoch_end(self, epoch, logs=None):
            self.seen.append(("epoch", epoch, float(logs["loss"]),
                              float(logs["mean_absolute_error"])))

    class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
        def __init__(self, patience=0):
            super().__init__()
            self.patience = patience
            self.best_weights = None

        def on_train_begin(self, logs=None):
            self.wait = 0
            self.stopped_epoch = 0
            self.best = np.inf

        def on_epoch_end(self, epoch, logs=None):
            current = logs.get("loss")
            if np.less(current, self.best):
                self.best = current
                self.wait = 0
                self.best_weights = self.model.get_weights()
            else:
                self.wait += 1
                if self.wait >= self.patience:
                    self.stopped_epoch = epoch
                    self.model.stop_training = True
                    self.model.set_weights(self.best_weights)

    class CustomLearningRateScheduler(keras.callbacks.Callback):
        def __init__(self, schedule):
            super().__init__()
            self.schedule = schedule
            self.rates = []

        def on_epoch_begin(self, epoch, logs=None):
            lr = float(np.array(self.model.optimizer.learning_rate))
            scheduled_lr = self.schedule(epoch, lr)
            self.model.optimizer.learning_rate = scheduled_lr
            self.rates.append(float(np.array(self.model.optimizer.learning_rate)))

    LR_SCHEDULE = [(0, 0.1), (2, 0.05), (4, 0.02)]

    def lr_schedule(epoch, lr):
        if epoch < LR_SCHEDULE[0][0] or epoch > LR_SCHEDULE[-1][0]:
            return lr
        for i in range(len(LR_SCHEDULE)):
            if epoch == LR_SCHEDULE[i][0]:
                return LR_SCHEDULE[i][1]
        return lr

    printing = LossAndErrorPrintingCallback()
    model = get_model()
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=[printing])

    model = get_model()
    stopping = EarlyStoppingAtMinLoss(patience=1)
    history = model.fit(x, y, batch_size=32, epochs=epochs, shuffle=False, verbose=0,
                        callbacks=[stopping])

    model = get_model()
    scheduler = CustomLearningRateScheduler(lr_schedule)
    scheduled = model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0,
                          callbacks=[scheduler])
    return {"seen": [list(s) for s in printing.seen],
            "early loss": [float(v) for v in history.history["loss"]],
            "stopped epoch": stopping.stopped_epoch,
            "rates": scheduler.rates,
            "scheduled loss": [float(v) for v in scheduled.history["loss"]],
            "weights": [w.astype(float).ravel().tolist() for w in model.get_weights()]}
