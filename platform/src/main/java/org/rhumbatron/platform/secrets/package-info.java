/**
 * The keys core signs with: HMAC keys kept in the database ({@link
 * org.rhumbatron.platform.secrets.SigningKeys}), so that every core of several signs and checks
 * alike, rotated with an overlap during which the old key still counts.
 */
package org.rhumbatron.platform.secrets;
