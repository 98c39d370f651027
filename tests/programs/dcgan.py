"""TF's "Deep Convolutional Generative Adversarial Network" tutorial: a generator of Dense,
BatchNormalization, LeakyReLU, Reshape and Conv2DTranspose layers, a discriminator of strided
Conv2D, LeakyReLU and Dropout, ``BinaryCrossentropy(from_logits=True)`` losses, two Adam
optimizers and a ``tf.function`` step with two tapes. Shrunk: 8x8 images of a bright square,
noise of 16, few filters."""
import numpy as np


def main(tf, epochs=3, seed=0):
    tf.random.set_seed(seed)
    rng = np.random.default_rng(5)
    images = np.full((64, 8, 8, 1), -1.0, "float32")
    for image, row, col in zip(images, rng.integers(0, 5, 64), rng.integers(0, 5, 64)):
        image[row:row + 3, col:col + 3, 0] = 1.0
    BATCH_SIZE, noise_dim = 16, 16
    train_dataset = tf.data.Dataset.from_tensor_slices(images).shuffle(64).batch(BATCH_SIZE)
    layers = tf.keras.layers

    def make_generator_model():
        model = tf.keras.Sequential()
        model.add(layers.Dense(2 * 2 * 32, use_bias=False, input_shape=(noise_dim,)))
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())
        model.add(layers.Reshape((2, 2, 32)))
        model.add(layers.Conv2DTranspose(16, (3, 3), strides=(1, 1), padding="same",
                                         use_bias=False))
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())
        model.add(layers.Conv2DTranspose(8, (3, 3), strides=(2, 2), padding="same",
                                         use_bias=False))
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())
        model.add(layers.Conv2DTranspose(1, (3, 3), strides=(2, 2), padding="same",
                                         use_bias=False, activation="tanh"))
        return model

    def make_discriminator_model():
        model = tf.keras.Sequential()
        model.add(layers.Conv2D(8, (3, 3), strides=(2, 2), padding="same",
                                input_shape=[8, 8, 1]))
        model.add(layers.LeakyReLU())
        model.add(layers.Dropout(0.3))
        model.add(layers.Conv2D(16, (3, 3), strides=(2, 2), padding="same"))
        model.add(layers.LeakyReLU())
        model.add(layers.Dropout(0.3))
        model.add(layers.Flatten())
        model.add(layers.Dense(1))
        return model

    generator = make_generator_model()
    discriminator = make_discriminator_model()
    cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    def discriminator_loss(real_output, fake_output):
        real_loss = cross_entropy(tf.ones_like(real_output), real_output)
        fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
        return real_loss + fake_loss

    def generator_loss(fake_output):
        return cross_entropy(tf.ones_like(fake_output), fake_output)

    generator_optimizer = tf.keras.optimizers.Adam(1e-3)
    discriminator_optimizer = tf.keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(images):
        noise = tf.random.normal([BATCH_SIZE, noise_dim])
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            generated_images = generator(noise, training=True)
            real_output = discriminator(images, training=True)
            fake_output = discriminator(generated_images, training=True)
            gen_loss = generator_loss(fake_output)
            disc_loss = discriminator_loss(real_output, fake_output)
        gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
        gradients_of_discriminator = disc_tape.gradient(disc_loss,
                                                        discriminator.trainable_variables)
        generator_optimizer.apply_gradients(zip(gradients_of_generator,
                                                generator.trainable_variables))
        discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator,
                                                    discriminator.trainable_variables))
        return gen_loss, disc_loss

    history = []
    for epoch in range(epochs):
        losses = [train_step(image_batch) for image_batch in train_dataset]
        history.append([float(np.mean([float(g) for g, _ in losses])),
                        float(np.mean([float(d) for _, d in losses]))])
    generated = generator(tf.random.normal([4, noise_dim]), training=False)
    return {"gen, disc losses": history, "generated shape": list(generated.shape),
            "generated in [-1, 1]": bool(float(tf.reduce_max(tf.abs(generated))) <= 1.0)}
