/**
 * The project-view-projector subscription: claims each Event, writes the project feed ({@code
 * project_events}) and hands the fresh Events of each project to its {@code ProjectViewActor}.
 */
package org.rhumbatron.router.projector;
