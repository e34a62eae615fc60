/**
 * Checks of signed webhooks made apart from core's signer: one written from the Standard Webhooks
 * specification's text, and one that runs the npm {@code standardwebhooks} package under node.
 */
package org.rhumbatron.testkit.webhooks;
