// The console's entry: the router (every screen a deep link under /console/), TanStack Query, and
// the signed-in frame. Each screen is its own chunk, loaded when first shown.
import { lazy, StrictMode, Suspense } from "react";
import { createRoot } from "react-dom/client";
import { createBrowserRouter, Navigate, RouterProvider } from "react-router";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { ApiError, onSessionEnded, setCsrfToken } from "./api/client";
import { Layout } from "./layout";
import { SignIn } from "./pages/sign-in";
import { AcceptInvitation } from "./pages/accept-invitation";
import "./styles.css";

const Overview = lazy(() => import("./pages/overview"));
const Clients = lazy(() => import("./pages/clients"));
const ClientDetail = lazy(() => import("./pages/client-detail"));
const Connections = lazy(() => import("./pages/connections"));
const ConnectionDetail = lazy(() => import("./pages/connection-detail"));
const Leads = lazy(() => import("./pages/leads"));
const LeadDetail = lazy(() => import("./pages/lead-detail"));
const Failures = lazy(() => import("./pages/failures"));
const JobDetail = lazy(() => import("./pages/job-detail"));
const Alerts = lazy(() => import("./pages/alerts"));
const Channels = lazy(() => import("./pages/channels"));
const Users = lazy(() => import("./pages/users"));
const Audit = lazy(() => import("./pages/audit"));
const ChangePassword = lazy(() => import("./pages/password"));

const queries = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not get better by asking again.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
      staleTime: 5_000,
    },
  },
});

const screen = (element: React.ReactNode) => (
  <Suspense fallback={<p aria-busy="true">Loading…</p>}>{element}</Suspense>
);

const router = createBrowserRouter(
  [
    { path: "/sign-in", element: <SignIn /> },
    { path: "/accept-invitation", element: <AcceptInvitation /> },
    {
      path: "/",
      element: <Layout />,
      children: [
        { index: true, element: <Navigate to="overview" replace /> },
        { path: "overview", element: screen(<Overview />) },
        { path: "clients", element: screen(<Clients />) },
        { path: "clients/:id", element: screen(<ClientDetail />) },
        { path: "connections", element: screen(<Connections />) },
        { path: "connections/:id", element: screen(<ConnectionDetail />) },
        { path: "leads", element: screen(<Leads />) },
        { path: "leads/:id", element: screen(<LeadDetail />) },
        { path: "failures", element: screen(<Failures />) },
        { path: "jobs/:id", element: screen(<JobDetail />) },
        { path: "alerts", element: screen(<Alerts />) },
        { path: "channels", element: screen(<Channels />) },
        { path: "users", element: screen(<Users />) },
        { path: "audit", element: screen(<Audit />) },
        { path: "password", element: screen(<ChangePassword />) },
        { path: "*", element: <p role="alert">No such page.</p> },
      ],
    },
  ],
  { basename: "/console" },
);

// A session that ends while in use (an /admin/* call answers 401): forget what was read, and sign in
// again to come back to the same screen.
onSessionEnded(() => {
  const { pathname, search } = router.state.location;
  const here = pathname.replace(/^\/console(?=\/|$)/, "") || "/";
  if (here === "/sign-in") return;
  const next = `${here}${search}`;
  setCsrfToken(undefined);
  queries.clear();
  void router.navigate(`/sign-in?ended=1&next=${encodeURIComponent(next)}`, { replace: true });
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
