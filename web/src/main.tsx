import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App';
import { CompanyProvider } from './company';
import { SessionProvider } from './session';
import './styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <SessionProvider>
        <CompanyProvider>
          <App />
        </CompanyProvider>
      </SessionProvider>
    </BrowserRouter>
  </StrictMode>,
);
