"""keras.io's "Text classification with Transformer"
(https://keras.io/examples/nlp/text_classification_with_transformer/, as last modified
2024/06/30: ``import keras``, ``import tensorflow as tf``, ``from keras import layers``): a ``TransformerBlock`` layer subclass (MultiHeadAttention, a feed-forward
Sequential, two LayerNormalizations with residuals, Dropout) on a ``TokenAndPositionEmbedding``
layer subclass (token and position Embeddings added, positions from ``tf.range``), then
GlobalAveragePooling1D -> Dropout -> Dense(20, relu) -> Dropout -> Dense(2, softmax), compiled
with optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"] and fit
with validation_data. Shrunk: 64 generated id sequences (vocabulary 30, length 10, the label
whether id 1 is more frequent than id 2) and 32 for validation instead of IMDB's, embed_dim 8
and ff_dim 8 instead of 32, 2 epochs, batch 16, and the dropout rates 0 (a random mask cannot be
compared number for number); then evaluate and predict. The initial weights come from
``init``."""
import numpy as np


def main(tf, init=None, epochs=2):
    keras = tf.keras
    layers = tf.keras.layers

    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
            super().__init__()
            self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.ffn = keras.Sequential(
                [
                    layers.Dense(ff_dim, activation="relu"),
                    layers.Dense(embed_dim),
                ]
            )
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)

        def call(self, inputs):
            attn_output = self.att(inputs, inputs)
            attn_output = self.dropout1(attn_output)
            out1 = self.layernorm1(inputs + attn_output)
            ffn_output = self.ffn(out1)
            ffn_output = self.dropout2(ffn_output)
            return self.layernorm2(out1 + ffn_output)

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            maxlen = tf.shape(x)[-1]
            positions = tf.range(start=0, limit=maxlen, delta=1)
            positions = self.pos_emb(positions)
            x = self.token_emb(x)
            return x + positions

    vocab_size, maxlen = 30, 10
    rng = np.random.default_rng(12)
    ids = rng.integers(0, vocab_size, (96, maxlen))
    labels = ((ids == 1).sum(1) > (ids == 2).sum(1)).astype("int64")
    x_train, y_train, x_val, y_val = ids[:64], labels[:64], ids[64:], labels[64:]

    embed_dim = 8  # Embedding size for each token
    num_heads = 2  # Number of attention heads
    ff_dim = 8  # Hidden layer size in feed forward network inside transformer

    inputs = layers.Input(shape=(maxlen,))
    embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
    x = embedding_layer(inputs)
    transformer_block = TransformerBlock(embed_dim, num_heads, ff_dim, rate=0.0)
    x = transformer_block(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.0)(x)
    x = layers.Dense(20, activation="relu")(x)
    x = layers.Dropout(0.0)(x)
    outputs = layers.Dense(2, activation="softmax")(x)

    model = keras.Model(inputs=inputs, outputs=outputs)
    if init is not None:
        model.set_weights(init(model.get_weights()))

    model.compile(
        optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    history = model.fit(
        x_train, y_train, batch_size=16, epochs=epochs, validation_data=(x_val, y_val),
        shuffle=False, verbose=0
    )
    loss, accuracy = model.evaluate(x_val, y_val, verbose=0)
    return {"history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
            "weights": [list(w.shape) for w in model.get_weights()],
            "evaluate": [float(loss), float(accuracy)],
            "predict": model.predict(x_val[:4], verbose=0).tolist()}
