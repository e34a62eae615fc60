package org.rhumbatron.server;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a certificate chain and its private key from PEM files into a key store. The key may be
 * PKCS#8 ({@code PRIVATE KEY}: RSA, EC or Ed25519) or PKCS#1 ({@code RSA PRIVATE KEY}); an error
 * names the file and what is wrong, never the key's bytes.
 */
final class PemFiles {
  static final String ALIAS = "core";
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");
  // DER of AlgorithmIdentifier { rsaEncryption, NULL }: wraps a PKCS#1 key into PKCS#8.
  private static final byte[] RSA_ALGORITHM = {
    0x30,
    0x0d,
    0x06,
    0x09,
    0x2a,
    (byte) 0x86,
    0x48,
    (byte) 0x86,
    (byte) 0xf7,
    0x0d,
    0x01,
    0x01,
    0x01,
    0x05,
    0x00
  };

  private PemFiles() {}

  /** A key store holding the key under {@link #ALIAS} with the chain, protected by {@code pass}. */
  static KeyStore keyStore(Path certFile, Path keyFile, char[] pass) {
    List<X509Certificate> chain = certificates(certFile);
    PrivateKey key = privateKey(keyFile);
    if (!matches(key, chain.get(0))) {
      throw new IllegalArgumentException(
          "http.tls.key " + keyFile + " is not the key of the first certificate in " + certFile);
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry(ALIAS, key, pass, chain.toArray(Certificate[]::new));
      return store;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot build the TLS key store: " + e.getMessage(), e);
    }
  }

  /** The certificates of a PEM file, the server's first; none is an error. */
  static List<X509Certificate> certificates(Path file) {
    byte[] bytes = read("http.tls.cert", file);
    try {
      List<X509Certificate> chain =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(bytes))
              .stream()
              .map(X509Certificate.class::cast)
              .toList();
      if (chain.isEmpty()) {
        throw new IllegalArgumentException(
            "http.tls.cert " + file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
      }
      return chain;
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "http.tls.cert " + file + " is not a PEM certificate chain: " + e.getMessage());
    }
  }

  static PrivateKey privateKey(Path file) {
    String text = new String(read("http.tls.key", file), StandardCharsets.US_ASCII);
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String type = m.group(1);
      byte[] der = Base64.getMimeDecoder().decode(m.group(2));
      switch (type) {
        case "PRIVATE KEY":
          return pkcs8(file, der);
        case "RSA PRIVATE KEY":
          return pkcs8(file, wrapPkcs1(der));
        case "ENCRYPTED PRIVATE KEY":
          throw new IllegalArgumentException(
              "http.tls.key "
                  + file
                  + " is encrypted; core needs it unencrypted (readable by"
                  + " core alone): openssl pkcs8 -in KEY -out KEY.plain");
        case "EC PRIVATE KEY":
          throw new IllegalArgumentException(
              "http.tls.key "
                  + file
                  + " is a SEC1 EC key; convert it to PKCS#8:"
                  + " openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8");
        default:
          // e.g. EC PARAMETERS before the key: look further
      }
    }
    throw new IllegalArgumentException(
        "http.tls.key " + file + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
  }

  private static PrivateKey pkcs8(Path file, byte[] der) {
    for (String algorithm : List.of("RSA", "EC", "Ed25519")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not this algorithm: try the next
      }
    }
    throw new IllegalArgumentException(
        "http.tls.key " + file + " is no RSA, EC or Ed25519 private key");
  }

  /** Whether {@code key} signs what the certificate's public key verifies. */
  private static boolean matches(PrivateKey key, X509Certificate cert) {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> key.getAlgorithm();
        };
    byte[] probe = "rhumbatron tls key check".getBytes(StandardCharsets.US_ASCII);
    try {
      Signature sign = Signature.getInstance(algorithm);
      sign.initSign(key);
      sign.update(probe);
      byte[] signature = sign.sign();
      Signature verify = Signature.getInstance(algorithm);
      verify.initVerify(cert.getPublicKey());
      verify.update(probe);
      return verify.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static byte[] wrapPkcs1(byte[] pkcs1) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(new byte[] {0x02, 0x01, 0x00}); // version 0
    body.writeBytes(RSA_ALGORITHM);
    body.writeBytes(der(0x04, pkcs1));
    return der(0x30, body.toByteArray());
  }

  private static byte[] der(int tag, byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(tag);
    int n = content.length;
    if (n < 0x80) {
      out.write(n);
    } else {
      int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write((n >>> (8 * i)) & 0xff);
      }
    }
    out.writeBytes(content);
    return out.toByteArray();
  }

  private static byte[] read(String key, Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IllegalArgumentException(key + " " + file + ": no such file");
    } catch (java.nio.file.AccessDeniedException e) {
      throw new IllegalArgumentException(key + " " + file + ": not readable by core");
    } catch (IOException e) {
      throw new IllegalArgumentException(key + " " + file + ": cannot read it: " + e.getMessage());
    }
  }
}
