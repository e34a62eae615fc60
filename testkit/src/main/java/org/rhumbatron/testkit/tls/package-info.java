/** A CA and a server certificate made at test time, so that no key is ever checked in. */
package org.rhumbatron.testkit.tls;
