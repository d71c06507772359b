// Sign in: POST /console/api/session { email, password } ⇒ the session cookie and its CSRF token.
import { useState } from "react";
import { useNavigate, useSearchParams } from "react-router";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, setCsrfToken } from "../api/client";
import { ErrorBox } from "../ui";

/** Only a path inside the console: `next` comes from the URL and must not lead elsewhere. */
const safeNext = (next: string | null) => (next && /^\/(?!\/)/.test(next) ? next : "/overview");

export function SignIn() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const client = useQueryClient();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const signIn = useMutation({
    mutationFn: () => api.post("/console/api/session", { body: { email, password } }),
    onSuccess: (session) => {
      setCsrfToken(session.csrfToken);
      client.setQueryData(["session"], session);
      void navigate(safeNext(params.get("next")), { replace: true });
    },
  });
  return (
    <main id="main" className="narrow">
      <h1>Sign in to Leadgate</h1>
      {params.get("accepted") && <p role="status">Your password is set. Sign in with it.</p>}
      {params.get("ended") && <p role="status">Your session ended. Sign in again to continue.</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          signIn.mutate();
        }}
      >
        <label>
          E-mail
          <input
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <button type="submit" disabled={signIn.isPending}>
          Sign in
        </button>
        {signIn.isError && <ErrorBox error={signIn.error} />}
      </form>
    </main>
  );
}
