/**
 * TLS trust from PEM files an operator names: the CA that signed a server's certificate, for core's
 * connections to NATS and for the demo's calls to its own cores.
 */
package org.rhumbatron.platform.tls;
