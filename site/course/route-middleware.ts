/**
 * Previous and Next on every page come from the course order (site/course/course.ts): the welcome
 * page, then each lesson and its labs. Pages off that path (the scratch terminal, the clusters
 * page, the explorer, the index pages) show neither, and a lab page draws its own (its workspace
 * covers the footer).
 */
import { defineRouteMiddleware } from '@astrojs/starlight/route-data';
import { courseNeighbours, type CourseLink } from './course.ts';

type PaginationLink = NonNullable<App.Locals['starlightRoute']['pagination']['next']>;

function asLink(l: CourseLink | undefined): PaginationLink | undefined {
  return l && { type: 'link', label: l.label, href: l.href, isCurrent: false, badge: undefined, attrs: {} };
}

export const onRequest = defineRouteMiddleware((context) => {
  const route = context.locals.starlightRoute;
  const around = courseNeighbours(context.url.pathname);
  // A lab page's workspace covers the page's footer: it draws its own way on (LabCourseNav.astro).
  const own = around && context.url.pathname.startsWith('/labs/');
  route.pagination = !around || own ? { prev: undefined, next: undefined } : { prev: asLink(around.prev), next: asLink(around.next) };
});
