/**
 * The Project aggregate as the lifecycle sees it: {@link
 * org.rhumbatron.lifecycle.projects.Projects} creates a Project through its root actor, changes its
 * archived, deleted and live-app flags on the shard of {@code project:<id>} (the row is written by
 * the root's {@code ProjectFlags}), and ends the open Changes of an ended Project.
 */
package org.rhumbatron.lifecycle.projects;
