"""TF's "Convolutional Variational Autoencoder" tutorial: an encoder of two strided Conv2D and a
Dense giving mean and log-variance, the reparameterization trick with ``tf.random.normal``, a
decoder of Conv2DTranspose layers, the single-sample Monte Carlo ELBO with
``log_normal_pdf`` and ``tf.nn.sigmoid_cross_entropy_with_logits``, and a ``tf.function``
train step with Adam. Shrunk: 8x8 binary images of bars, latent size 2, few filters."""
import numpy as np


def main(tf, epochs=3, seed=0):
    tf.random.set_seed(seed)
    rng = np.random.default_rng(4)
    images = np.zeros((64, 8, 8, 1), "float32")
    for image, row, col in zip(images, rng.integers(0, 8, 64), rng.integers(0, 8, 64)):
        image[row, :, 0] = 1.0
        image[:, col, 0] = 1.0
    train_dataset = tf.data.Dataset.from_tensor_slices(images[:48]).batch(16)
    test_dataset = tf.data.Dataset.from_tensor_slices(images[48:]).batch(16)

    class CVAE(tf.keras.Model):
        """Convolutional variational autoencoder."""

        def __init__(self, latent_dim):
            super(CVAE, self).__init__()
            self.latent_dim = latent_dim
            self.encoder = tf.keras.Sequential([
                tf.keras.layers.InputLayer(input_shape=(8, 8, 1)),
                tf.keras.layers.Conv2D(filters=8, kernel_size=3, strides=(2, 2),
                                       activation="relu"),
                tf.keras.layers.Conv2D(filters=16, kernel_size=3, strides=(2, 2),
                                       padding="same", activation="relu"),
                tf.keras.layers.Flatten(),
                tf.keras.layers.Dense(latent_dim + latent_dim),
            ])
            self.decoder = tf.keras.Sequential([
                tf.keras.layers.InputLayer(input_shape=(latent_dim,)),
                tf.keras.layers.Dense(units=2 * 2 * 8, activation=tf.nn.relu),
                tf.keras.layers.Reshape(target_shape=(2, 2, 8)),
                tf.keras.layers.Conv2DTranspose(filters=16, kernel_size=3, strides=2,
                                                padding="same", activation="relu"),
                tf.keras.layers.Conv2DTranspose(filters=8, kernel_size=3, strides=2,
                                                padding="same", activation="relu"),
                tf.keras.layers.Conv2DTranspose(filters=1, kernel_size=3, strides=1,
                                                padding="same"),
            ])

        @tf.function
        def sample(self, eps=None):
            if eps is None:
                eps = tf.random.normal(shape=(100, self.latent_dim))
            return self.decode(eps, apply_sigmoid=True)

        def encode(self, x):
            mean, logvar = tf.split(self.encoder(x), num_or_size_splits=2, axis=1)
            return mean, logvar

        def reparameterize(self, mean, logvar):
            eps = tf.random.normal(shape=mean.shape)
            return eps * tf.exp(logvar * .5) + mean

        def decode(self, z, apply_sigmoid=False):
            logits = self.decoder(z)
            if apply_sigmoid:
                probs = tf.sigmoid(logits)
                return probs
            return logits

    optimizer = tf.keras.optimizers.Adam(1e-2)

    def log_normal_pdf(sample, mean, logvar, raxis=1):
        log2pi = tf.math.log(2. * np.pi)
        return tf.reduce_sum(
            -.5 * ((sample - mean) ** 2. * tf.exp(-logvar) + logvar + log2pi), axis=raxis)

    def compute_loss(model, x):
        mean, logvar = model.encode(x)
        z = model.reparameterize(mean, logvar)
        x_logit = model.decode(z)
        cross_ent = tf.nn.sigmoid_cross_entropy_with_logits(logits=x_logit, labels=x)
        logpx_z = -tf.reduce_sum(cross_ent, axis=[1, 2, 3])
        logpz = log_normal_pdf(z, 0., 0.)
        logqz_x = log_normal_pdf(z, mean, logvar)
        return -tf.reduce_mean(logpx_z + logpz - logqz_x)

    @tf.function
    def train_step(model, x, optimizer):
        with tf.GradientTape() as tape:
            loss = compute_loss(model, x)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))

    model = CVAE(2)
    elbos = []
    for epoch in range(1, epochs + 1):
        for train_x in train_dataset:
            train_step(model, train_x, optimizer)
        loss = tf.keras.metrics.Mean()
        for test_x in test_dataset:
            loss(compute_loss(model, test_x))
        elbos.append(-float(loss.result()))
    samples = model.sample()
    return {"elbo": elbos, "sample shape": list(samples.shape),
            "sample range": [float(tf.reduce_min(samples)), float(tf.reduce_max(samples))]}
